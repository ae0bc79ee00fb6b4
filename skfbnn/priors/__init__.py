"""Priors: Gaussian weight priors and GP priors on function values."""
