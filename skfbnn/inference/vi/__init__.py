"""Variational inference update rules."""
