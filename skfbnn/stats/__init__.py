"""Numerical building blocks on Gaussians."""
