"""
Your own network in a pipeline: a residual MLP, searched by GridSearchCV
========================================================================

Every estimator takes ``network=``: a callable ``network(n_features_in, n_outputs,
**network_params)`` that returns a ``torch.nn.Module`` (here the class
:class:`skfbnn.nn.ResidualMLP`), or a module instance. The estimator stays a scikit-learn
estimator: it goes into a ``Pipeline`` after a ``StandardScaler``, and ``GridSearchCV`` searches
the network's own arguments through ``network_params``, scored by a proper scoring rule (the
Gaussian negative log-likelihood of the predictive). The initial weights of every chain come
from the fit's generator (``random_state``), so the search is reproducible.

The data are scikit-learn's diabetes set; SGLD runs on a **reduced budget** (two chains of 600
steps) so that the search takes about a minute of one core.
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
from skfbnn.metrics import neg_gaussian_nll_scorer
from skfbnn.nn import ResidualMLP

X, y = load_diabetes(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

pipe = make_pipeline(
    StandardScaler(),
    SGLDRegressor(network=ResidualMLP, n_chains=2, n_burnin=400, n_samples=10, thinning=20,
                  min_epochs=0, random_state=0),
)
grid = {"sgldregressor__network_params": [{"width": 8, "n_blocks": 1},
                                          {"width": 16, "n_blocks": 2}]}
search = GridSearchCV(pipe, grid, scoring=neg_gaussian_nll_scorer,
                      cv=KFold(3, shuffle=True, random_state=0))
start = time.perf_counter()
search.fit(X_train, y_train)
print(f"search: {time.perf_counter() - start:.0f} s")
for params, score in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"],
                         strict=True):
    print(params["sgldregressor__network_params"], f"mean NLL {-score:.3f}")
print("best:", search.best_params_["sgldregressor__network_params"])

# %%
# The chosen network's predictive on the held-out rows
# -------------------------------------------------------
# ``network_`` of the fitted estimator is the fit's own copy of the module; the draws hold its
# parameters by the module's own names.
best = search.best_estimator_
est = best[-1]
print(type(est.network_).__name__, sorted(est.posterior_.draws)[:3])
mean, std = best.predict(X_test, return_std=True)
order = np.argsort(mean)
fig, ax = plt.subplots(figsize=(7, 4))
ax.errorbar(np.arange(len(order)), mean[order], yerr=2 * std[order], fmt="none",
            ecolor="C0", alpha=0.4, label="predictive mean +- 2 std")
ax.plot(np.arange(len(order)), y_test[order], "k.", ms=4, label="held-out target")
ax.set_xlabel("held-out rows, by predicted mean")
ax.set_ylabel("disease progression")
ax.legend()
coverage = np.mean(np.abs(y_test - mean) <= 1.96 * std)
ax.set_title(f"residual MLP, SGLD: 95% interval covers {coverage:.0%} of the held-out rows")
fig.tight_layout()
plt.show()
