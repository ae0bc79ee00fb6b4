"""Export of a fitted sampler to ArviZ (optional dependency)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import to_numpy

__all__ = ["ArviZMixin"]


class ArviZMixin:
    """``to_arviz()``: predictions at probe points, sample stats and diagnostics (the
    estimators of the ``mh`` family, whose runs trace every step's statistics)."""

    def to_arviz(self, X: Any = None) -> Any:
        """An ``arviz.InferenceData`` of the kept draws.

        Parameters
        ----------
        X : array-like of shape (n_points, n_features), optional
            Points at which the draws' network outputs are recorded (group
            ``posterior``, variable ``f`` with dims ``chain, draw, point, output``);
            by default the training rows monitored in ``diagnostics_["probe_indices"]``
            (only their outputs, as the training data are not stored).

        Returns
        -------
        arviz.InferenceData
            ``posterior`` (``f``; ``log_noise`` when learned), ``sample_stats``
            (``lp``, ``accept_prob``, ``accepted``, ``step_size`` at the kept
            steps) and the scalar diagnostics as attributes.

        Raises
        ------
        ImportError
            When arviz is not installed (``pip install skfbnn[arviz]``).
        """
        try:
            import arviz
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("to_arviz() needs arviz: pip install arviz") from exc
        if X is None:
            X = self._probe_X
        C, S = self.posterior_.shape
        f = to_numpy(self._draws_at(X)).reshape(C, S, len(X), -1)
        posterior = {"f": f}
        draws = self.posterior_.draws
        if "log_noise" in draws:
            posterior["log_noise"] = to_numpy(draws["log_noise"])
        kept = self.diagnostics_["kept_steps"]
        stats = {("lp" if name == "log_post" else name): values[kept].T
                 for name, values in self.diagnostics_["trace"].items()}
        attrs = {k: v for k, v in self.diagnostics_.items()
                 if isinstance(v, (int, float, np.floating, np.integer))}
        return arviz.from_dict(posterior=posterior, sample_stats=stats,
                               dims={"f": ["point", "output"]}, attrs=attrs)
