"""Cross-validated benchmarks: configurations, runner and report."""
