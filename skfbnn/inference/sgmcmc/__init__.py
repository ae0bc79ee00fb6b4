"""Stochastic-gradient MCMC update rules (prior-agnostic)."""
