"""The classification part: labels, categorical likelihood, averaged probabilities."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..device import to_numpy
from ..diagnostics import collapsed_chains
from ..exceptions import SamplerDivergenceError
from ..likelihoods import CategoricalLikelihood
from ._base import BayesianNetBase, outputs_at

__all__ = ["BayesianClassifierBase"]

_LOSS_LIMIT = 10.0
"""A training log loss above this many times the class-frequency predictor's is a
diverged fit."""
_MAX_CHECK_ROWS = 1000


class BayesianClassifierBase(BayesianNetBase):
    """Classification: one logit per class, ``predict_proba`` = mean of draw softmaxes."""

    _task_params: list = []
    _task = "classification"

    def _validate_fit_data(self, X: Any, y: Any):
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        return X, y

    def _encode_labels(self, y: np.ndarray) -> np.ndarray:
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                "The classifier needs samples of at least 2 classes in the data, but "
                f"the data contains only one class: {self.classes_[0]!r}."
            )
        return encoded

    def _encode_target(self, y: np.ndarray, device, dtype):
        encoded = self._encode_labels(y)
        return torch.as_tensor(encoded, dtype=torch.long, device=device), len(self.classes_)

    def _make_likelihood(self, spec, hyper):
        """Softmax, unless the method declares its own ``classification_likelihood``
        (the Metropolis-Hastings samplers: Gaussian on shifted one-hot targets)."""
        make = getattr(spec.module, "classification_likelihood", None)
        return CategoricalLikelihood() if make is None else make(hyper)

    def _diagnose_optimisation(self, result) -> dict[str, Any]:
        """The optimisers' diagnostics, after the samplers' collapsed-chain check on the
        second half of the objective's trace. A classifier's likelihood is bounded, so
        :meth:`_check_fit` can pass a fit thrown to enormous weights whose averaged
        probabilities stay moderate; a regressor's graded check of its predictions (a
        milder blow-up warns) stands alone."""
        diagnostics = super()._diagnose_optimisation(result)
        objective = diagnostics["objective"]
        collapsed = collapsed_chains(objective, len(objective) // 2)
        if collapsed:
            raise SamplerDivergenceError(
                f"The optimisation diverged: run(s) {collapsed} ended with an objective more "
                "than 100 times below their starting value (weights or scales thrown to "
                "enormous values). The step size is too large for this problem: reduce "
                "learning_rate."
            )
        return diagnostics

    def _check_fit(self, posterior, forward, likelihood, X, yt, step_name) -> dict[str, Any]:
        """Raise :class:`SamplerDivergenceError` for a fit that stayed finite but blew up.

        The training log loss of the predictive (at up to 1000 rows) is compared
        with that of predicting the class frequencies: more than
        :data:`_LOSS_LIMIT` times it (and at least ``log 2``) means weights
        thrown to enormous values, so the probabilities are useless.
        """
        rows = np.unique(np.linspace(0, len(X) - 1, _MAX_CHECK_ROWS).round().astype(int))
        out = outputs_at(posterior, forward, X[rows])
        own = getattr(likelihood, "probabilities", None)
        proba = (torch.softmax(out, dim=-1) if own is None else own(out)).mean(0)
        labels = yt[rows].to(proba.device)
        loss = float(-proba.gather(1, labels[:, None]).clamp_min(1e-300).log().mean())
        freq = torch.bincount(yt, minlength=proba.shape[1]).double() / len(yt)
        baseline = max(float(-(freq * freq.clamp_min(1e-300).log()).sum()), float(np.log(2)))
        if not loss <= _LOSS_LIMIT * baseline:  # also NaN
            what = "sampler" if step_name == "step_size" else "optimisation"
            raise SamplerDivergenceError(
                f"The {what} diverged: the training log loss of its predictions is "
                f"{loss:.3g}, more than {_LOSS_LIMIT:g} times that of predicting the class "
                f"frequencies ({baseline:.3g}); the weights went to enormous values. The step "
                f"size is most likely too large for this problem: reduce {step_name}."
            )
        return {"warnings": []}

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
        return to_numpy(self._draw_probabilities(self._draws_at(X).to(torch.float64)).mean(0))

    def _draw_probabilities(self, out: torch.Tensor) -> torch.Tensor:
        """Class probabilities ``(D, n, K)`` of each draw's outputs: the softmax, or
        the likelihood's own ``probabilities`` when it defines them."""
        own = getattr(self.likelihood_, "probabilities", None)
        return torch.softmax(out, dim=-1) if own is None else own(out)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: Any) -> np.ndarray:
        """The class with the highest mean probability."""
        proba = self.predict_proba(X)  # checks fitted state first
        return self.classes_[np.argmax(proba, axis=1)]
