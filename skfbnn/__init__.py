"""skfbnn: scikit-learn estimators for Bayesian neural networks with functional priors."""

__version__ = "0.1.0"
