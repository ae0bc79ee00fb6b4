"""Inference: pure update rules, the run driver and the method registry."""
