"""
A Bayesian 1-D CNN on MNIST-1D, with its uncertainty
====================================================

MNIST-1D (Greydanus, 2020) is a 40-value signal per row and ten classes; a small
convolutional network models it far better than an MLP. ``network=CNN1d`` puts the package's
small 1-D CNN (:class:`skfbnn.nn.CNN1d`: three ``Conv1d -> GroupNorm -> GELU`` blocks and a
linear readout) behind SGHMC, and ``input_shape=(1, 40)`` tells the estimator that each row is
a one-channel signal: ``X`` stays a ``(n, 40)`` array for scikit-learn, and each row is
reshaped inside the network's call.

The posterior's draws disagree more on the rows it gets wrong: the mutual information between
the label and the draw (the epistemic part of the predictive entropy) separates them. The run
is **shortened** (four chains on 2000 training rows) to take a few minutes on a laptop CPU.

The data come from :func:`skfbnn.datasets.fetch_mnist1d` (downloaded once into the data home,
then read offline), or from a local copy in ``$SKFBNN_DATA_HOME``; without either, this
example only says so.
"""

# %%
# Data
# ----
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.metrics import accuracy_score, log_loss

from skfbnn import SGHMCClassifier
from skfbnn.datasets import fetch_mnist1d, load_mnist1d
from skfbnn.metrics import mutual_information
from skfbnn.nn import CNN1d

try:
    if os.environ.get("SKFBNN_DATA_HOME"):
        data = load_mnist1d(return_X_y=True)
    else:
        data = fetch_mnist1d(return_X_y=True)
except OSError as err:  # no network and no local copy
    data = None
    print(f"MNIST-1D is not available ({err}): skipping this example.")
else:
    X, y, X_test, y_test = data
    X, y = X[:2000], y[:2000]
    print(X.shape, X_test.shape)

# %%
# A Bayesian CNN by SGHMC
# -----------------------
# ``network_params`` are the CNN's own arguments (here its channels); the chains start from
# weights drawn from the fit's generator.
if data is not None:
    clf = SGHMCClassifier(network=CNN1d, network_params={"channels": 16},
                          input_shape=(1, 40), n_chains=4, n_burnin=1500, n_samples=10,
                          thinning=20, random_state=0)
    start = time.perf_counter()
    clf.fit(X, y)
    print(f"fit: {time.perf_counter() - start:.0f} s")
    proba = clf.predict_proba(X_test)
    print(f"test accuracy {accuracy_score(y_test, clf.classes_[proba.argmax(1)]):.3f}, "
          f"log loss {log_loss(y_test, proba, labels=clf.classes_):.3f}")

# %%
# Uncertainty on the rows it gets right and wrong
# -----------------------------------------------
if data is not None:
    draws = clf.predict_proba_draws(X_test)
    mi = mutual_information(draws)
    wrong = clf.classes_[proba.argmax(1)] != y_test
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    bins = np.linspace(0, 1, 21)
    ax[0].hist(proba.max(1)[~wrong], bins, alpha=0.6, density=True, label="right")
    ax[0].hist(proba.max(1)[wrong], bins, alpha=0.6, density=True, label="wrong")
    ax[0].set_xlabel("confidence (largest mean probability)")
    ax[0].legend()
    bins = np.linspace(0, mi.max(), 21)
    ax[1].hist(mi[~wrong], bins, alpha=0.6, density=True, label="right")
    ax[1].hist(mi[wrong], bins, alpha=0.6, density=True, label="wrong")
    ax[1].set_xlabel("mutual information (draws' disagreement)")
    fig.suptitle("SGHMC with a 1-D CNN on MNIST-1D: test rows")
    fig.tight_layout()
    plt.show()
