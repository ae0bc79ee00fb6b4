"""The classification part: labels, categorical likelihood, averaged probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..device import to_numpy
from ..diagnostics.health import classification_checks
from ..likelihoods import CategoricalLikelihood
from ._base import BayesianNetBase
from ._network import flat_rows

__all__ = ["BayesianClassifierBase"]


class BayesianClassifierBase(BayesianNetBase):
    """Classification: one logit per class, ``predict_proba`` = mean of draw softmaxes."""

    _task_params: list = []
    _task = "classification"

    def _validate_fit_data(self, X: Any, y: Any):
        X = flat_rows(self, X)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        return X, y

    def _encode_labels(self, y: np.ndarray) -> np.ndarray:
        classes, encoded = np.unique(y, return_inverse=True)
        old = self.__dict__.get("classes_")
        if self.warm_start and self.__sklearn_is_fitted__() and not (
                len(old) == len(classes) and np.array_equal(old, classes)):
            # the previous fit's outputs belong to its classes, in their order
            raise ValueError(
                "warm_start=True continues from the previous fit, so y must have the same "
                f"classes as in the previous call to fit. Previously got {old}, y has "
                f"{classes}. Fit with warm_start=False.")
        self.classes_ = classes
        if len(self.classes_) < 2:
            label = self.classes_[0]
            label = label.item() if isinstance(label, np.generic) else label
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {label!r}."
            )
        return encoded

    def _encode_target(self, y: np.ndarray, device, dtype, weights=None):
        """Labels as class indices (``classes_`` from every row, whatever its weight); the
        rows of positive weight must hold two classes at least."""
        encoded = self._encode_labels(y)
        if weights is not None:
            present = np.unique(encoded[weights > 0])
            if len(present) < 2:
                label = self.classes_[present[0]]
                label = label.item() if isinstance(label, np.generic) else label
                raise ValueError(
                    f"{type(self).__name__} needs samples of at least 2 classes among the "
                    "rows of positive sample_weight, but they contain only one class: "
                    f"{label!r}.")
        return torch.as_tensor(encoded, dtype=torch.long, device=device), len(self.classes_)

    def _make_likelihood(self, spec, hyper):
        """Softmax, unless the registry entry declares its own
        ``classification_likelihood`` (the Metropolis-Hastings samplers: Gaussian on
        shifted one-hot targets)."""
        make = spec.classification_likelihood
        return CategoricalLikelihood() if make is None else make(hyper)

    def _check_fit(self, posterior, outputs, likelihood, X, yt, step_name, advice=None
                   ) -> dict[str, Any]:
        """Raise for a fit that stayed finite but blew up, report one at chance accuracy
        (:func:`skfbnn.diagnostics.health.classification_checks`)."""
        return classification_checks(lambda rows: likelihood.probabilities(outputs(rows)),
                                     X, yt, step_name, advice)

    def _probe_moments(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Class-probability draws ``(D, n, K)`` at probe inputs (logits are identified
        only up to a shift) and the predictive variance ``p (1 - p)`` of each class
        indicator (which already includes the draws' spread)."""
        p = self._draw_probabilities(out)
        mean = p.mean(0)
        return p, mean * (1 - mean)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Mean over posterior draws of the per-draw class probabilities.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), columns in ``classes_`` order.
        """
        def mean_probabilities(out: torch.Tensor, rows: slice) -> torch.Tensor:
            p = self._draw_probabilities(out.to(torch.float64))
            # the draws last and contiguous: a row's mean does not depend on its block's
            # other rows (see skfbnn.estimators._regression.draw_moments)
            return p.movedim(0, -1).contiguous().mean(-1)

        return to_numpy(self._draws_at(X, mean_probabilities))  # a block of rows at a time

    def predict_proba_draws(self, X: Any) -> np.ndarray:
        """Class probabilities of every stored draw (or ensemble member).

        :meth:`predict_proba` is their mean over the first axis; their spread is the
        epistemic part of the uncertainty (e.g. the mutual information,
        :func:`skfbnn.metrics.mutual_information`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_draws, n_samples, n_classes)
            Columns in ``classes_`` order; draws chain-major for the samplers.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import make_classification
        >>> from skfbnn import SGLDClassifier
        >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
        >>> clf = SGLDClassifier(n_chains=2, n_burnin=50, n_samples=5, random_state=0,
        ...                      device="cpu").fit(X, y)
        >>> draws = clf.predict_proba_draws(X[:3])
        >>> draws.shape
        (10, 3, 2)
        >>> bool(np.allclose(draws.mean(axis=0), clf.predict_proba(X[:3])))
        True
        """
        return to_numpy(self._draws_at(X, lambda out, rows: self._draw_probabilities(
            out.to(torch.float64)).movedim(0, 1)).movedim(1, 0))

    def _draw_probabilities(self, out: torch.Tensor) -> torch.Tensor:
        """Class probabilities ``(D, n, K)`` of each draw's outputs (the likelihood's
        ``probabilities``: the softmax, or the method's own)."""
        return self.likelihood_.probabilities(out)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The class with the highest mean probability."""
        proba = self.predict_proba(X)  # checks fitted state first
        return self.classes_[np.argmax(proba, axis=1)]
