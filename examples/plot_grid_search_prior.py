"""
Choosing a prior by cross-validation
====================================

The scale of a weight prior acts like a Gaussian process's lengthscale: too small and the
network cannot follow the data, too large and the posterior spreads over functions that
overfit. Every skfbnn estimator is a scikit-learn estimator, so the prior's scale can be chosen
like any hyperparameter: a ``Pipeline`` with a ``StandardScaler``, ``GridSearchCV`` over
``prior_std`` and a **proper scoring rule** from :mod:`skfbnn.metrics`, here the Gaussian
negative log-likelihood of the predictive (``neg_gaussian_nll_scorer``), with the 95% coverage
and the CRPS recorded beside it.

The candidates are fixed scales and ``"learn"``, the default of ``SGLDRegressor``, which learns
one scale per layer's weights and biases by Gibbs steps. The data are scikit-learn's diabetes
set. SGLD runs on a **reduced budget** (four chains of 700 steps instead of eight chains of at
least 5000), so that the 13 fits of the search take under a minute.
"""

# %%
# The search
# ----------
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfbnn import SGLDRegressor
from skfbnn.metrics import make_coverage_scorer, neg_crps_scorer, neg_gaussian_nll_scorer

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

pipe = make_pipeline(
    StandardScaler(),
    SGLDRegressor(n_chains=4, n_burnin=500, n_samples=10, thinning=20, min_epochs=0,
                  random_state=0),
)
grid = {"sgldregressor__prior_std": [0.3, 1.0, 3.0, "learn"]}
search = GridSearchCV(
    pipe, grid, cv=KFold(3, shuffle=True, random_state=0), refit="nll",
    scoring={"nll": neg_gaussian_nll_scorer, "crps": neg_crps_scorer,
             "coverage": make_coverage_scorer(0.95)},
)
start = time.perf_counter()
search.fit(X_train, y_train)
print(f"13 fits in {time.perf_counter() - start:.0f} s; best: {search.best_params_}")

# %%
# The cross-validated scores
# --------------------------
# Scorers are greater-is-better, so the negative log-likelihood is reported with its sign
# flipped back.

results = search.cv_results_
labels = [str(v) for v in results["param_sgldregressor__prior_std"]]
nll = -results["mean_test_nll"]
nll_se = results["std_test_nll"] / np.sqrt(3)
for label, m, s, cov in zip(labels, nll, nll_se, results["mean_test_coverage"], strict=True):
    print(f"prior_std={label:6s} NLL {m:.3f} +- {s:.3f}   coverage {cov:.2f}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
ax1.errorbar(range(len(labels)), nll, yerr=nll_se, fmt="o", capsize=3)
ax1.set_ylabel("negative log-likelihood (lower is better)")
ax2.plot(range(len(labels)), results["mean_test_coverage"], "o")
ax2.axhline(0.95, color="black", ls="--", lw=1)
ax2.set_ylabel("95% coverage")
for ax in (ax1, ax2):
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("prior_std")
fig.tight_layout()
plt.show()

# %%
# The refitted model on the held-out quarter
# ------------------------------------------
# ``refit="nll"`` refits the best candidate on all training rows; the scorers work on the
# fitted pipeline directly.

best = search.best_estimator_
print(f"test NLL {-neg_gaussian_nll_scorer(best, X_test, y_test):.3f}, "
      f"CRPS {-neg_crps_scorer(best, X_test, y_test):.2f}, "
      f"coverage {make_coverage_scorer(0.95)(best, X_test, y_test):.2f}")

# %%
# The same works for a functional prior's kernel, e.g.
# ``{"functionalsgldregressor__kernel": ["rbf", "matern32", "matern52"]}`` with a
# ``FunctionalSGLDRegressor``. Selecting by coverage alone would be a mistake: a model can
# cover 95% of the targets by being uselessly wide, so use a proper score (log-likelihood or
# CRPS) and read coverage beside it.
