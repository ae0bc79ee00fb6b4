"""
Reliability diagram of a classifier
===================================

A classifier is *calibrated* when, among the test points it classifies with confidence
``p``, a fraction ``p`` is right. A reliability diagram bins the test points by the
probability of their predicted class (the confidence) and plots each bin's accuracy against
its mean confidence; a calibrated model follows the diagonal. The expected calibration error
(ECE) is the points' mean distance from it.

Here a deep ensemble and an SGHMC sampler are fitted on scikit-learn's digits (8 x 8 images,
ten classes), beside a plain ``MLPClassifier``. Both skfbnn classifiers average class
probabilities over their posterior draws or members in ``predict_proba``. They run on a
**reduced budget** to stay under a minute: 1500 Adam steps for the deep ensemble (default
10 000) and four chains of 1200 steps for SGHMC (defaults: eight chains, at least 5000 steps).
"""

# %%
# Fit the classifiers
# -------------------
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skfbnn import DeepEnsembleClassifier, SGHMCClassifier
from skfbnn.metrics import expected_calibration_error, reliability_curve

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                    random_state=0)

classifiers = {
    "deep ensemble": DeepEnsembleClassifier(n_iter=1500, min_epochs=0, random_state=0),
    "SGHMC": SGHMCClassifier(n_chains=4, n_burnin=1000, n_samples=10, thinning=20,
                             min_epochs=0, random_state=0),
    "MLPClassifier": MLPClassifier(hidden_layer_sizes=(50,), max_iter=200, random_state=0),
}
proba = {}
for name, clf in classifiers.items():
    start = time.perf_counter()
    model = make_pipeline(StandardScaler(), clf).fit(X_train, y_train)
    proba[name] = model.predict_proba(X_test)
    print(f"{name}: fitted in {time.perf_counter() - start:.1f} s")

# %%
# Scores
# ------
# The labels of digits are 0-9, which are also the columns of ``predict_proba``; with other
# labels, encode them first (``np.searchsorted(model.classes_, y_test)``).

for name, p in proba.items():
    print(f"{name:14s} accuracy {accuracy_score(y_test, p.argmax(1)):.3f}   "
          f"log loss {log_loss(y_test, p, labels=np.arange(10)):.3f}   "
          f"ECE {expected_calibration_error(y_test, p, n_bins=10):.3f}")

# %%
# The diagram
# -----------
# Each marker is a bin of test points (its area proportional to the number of points in it);
# below the diagonal the model is overconfident, above it underconfident.

fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), sharey=True)
for ax, (name, p) in zip(axes, proba.items(), strict=True):
    counts, accuracy, confidence = reliability_curve(y_test, p, n_bins=10)
    filled = counts > 0
    ax.plot([0, 1], [0, 1], color="black", ls="--", lw=1)
    ax.plot(confidence[filled], accuracy[filled], color="C0", lw=1)
    ax.scatter(confidence[filled], accuracy[filled], s=400 * counts[filled] / counts.sum(),
               color="C0", zorder=3)
    ax.set_title(f"{name}\nECE {expected_calibration_error(y_test, p, n_bins=10):.3f}",
                 fontsize=10)
    ax.set_xlabel("confidence (top-class probability)")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
axes[0].set_ylabel("accuracy")
fig.tight_layout()
plt.show()

# %%
# With its short run, SGHMC's draws still disagree on some test digits, so their averaged
# probabilities are lower than the accuracy they achieve: the points sit above the diagonal
# (underconfident). The ensemble's members agree more closely. Longer runs and the
# defaults change the picture; the classification results at the defaults are on the
# benchmarks page.
