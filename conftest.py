"""Root pytest configuration: doctests run over the package, except the CLI entry point."""

collect_ignore = ["skfbnn/__main__.py", "examples", "benchmarks"]
