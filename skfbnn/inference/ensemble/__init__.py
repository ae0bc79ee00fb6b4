"""Ensemble update rules."""
