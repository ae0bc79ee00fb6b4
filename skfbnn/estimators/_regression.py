"""The regression part: target scaling, Gaussian likelihood, predictive summaries."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.validation import validate_data

from ..device import make_generator, spawn_seed, to_numpy
from ..diagnostics.health import regression_checks
from ..likelihoods import GaussianLikelihood, HeteroscedasticGaussianLikelihood
from ..predictive import regression_cov, regression_moments, sample_regression
from ._base import BayesianNetBase
from ._params import REGRESSION

__all__ = ["BayesianRegressorBase"]

_KINDS = ("total", "epistemic", "aleatoric")


class BayesianRegressorBase(BayesianNetBase):
    """Regression: Gaussian observation noise, GP-style ``predict`` and ``sample_y``."""

    _task_params = REGRESSION
    _task = "regression"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _validate_fit_data(self, X: Any, y: Any):
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], y_numeric=True, multi_output=True
        )
        if len(X) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 training rows; got 1 sample. One "
                "value of y has no spread to set the scale of the targets, of the "
                "observation noise or of a GP prior."
            )
        return X, y

    def _encode_target(self, y: np.ndarray, device, dtype, weights=None):
        """Standardised targets of the columns to learn: constant columns are left out
        (they are predicted as their value, see :meth:`_with_constant_columns`). With row
        ``weights`` the mean and standard deviation are weighted (those of the rows
        repeated by their weights), and a column is constant over the rows of positive
        weight."""
        self._y_ndim = y.ndim
        Y = y.reshape(len(y), -1).astype(np.float64)
        self.n_outputs_ = Y.shape[1]
        self._constant = _constant_columns(Y, weights)
        mean, std = _moments(Y, weights)
        self._constant_value = mean
        self._constant_noise = 0.0 if self.noise_std == "learn" else float(self.noise_std)
        if self.normalize_y:
            self.y_mean_ = mean
            self.y_std_ = np.where(self._constant, 1.0, std)
        else:
            self.y_mean_, self.y_std_ = np.zeros(Y.shape[1]), np.ones(Y.shape[1])
        fit = ~self._constant
        Yt = (Y[:, fit] - self.y_mean_[fit]) / self.y_std_[fit]
        return torch.as_tensor(Yt, dtype=dtype).to(device), int(fit.sum())

    def _make_likelihood(self, spec, hyper):
        """Learned noise: shared (a posterior parameter) or per-member heads; or fixed."""
        if self.noise_std != "learn":
            return GaussianLikelihood(self.noise_std / self.y_std_[~self._constant])
        if spec.noise == "heads":
            return HeteroscedasticGaussianLikelihood(beta=hyper.get("nll_beta", 0.0))
        return GaussianLikelihood(None)

    def _check_fit(self, posterior, outputs, likelihood, X, yt, step_name, advice=None
                   ) -> dict[str, Any]:
        """Raise for a diverged fit, report a suspicious one and the constant columns
        (:func:`skfbnn.diagnostics.health.regression_checks`).

        ``diagnostics_["predictive_spread"]`` gets the spread of the predictive
        at the training inputs in target standard deviations, one per output
        (NaN for constant columns; see :func:`~skfbnn.diagnostics.predictive_spread`).
        """
        return regression_checks(posterior, outputs, likelihood, X, yt, self._constant,
                                 self.y_std_, self.noise_std == "learn", self._constant_noise,
                                 self._single_output(), step_name, advice)

    def _probe_moments(self, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Draws of the mean ``(D, n, k)`` at probe inputs and the total predictive
        variance there ``(n, k)`` (draw spread plus mean noise variance)."""
        draws = {k: v.to(out.device, out.dtype) for k, v in self.posterior_.flat().items()}
        f, log_noise = self.likelihood_.predictive(out, draws)
        noise_var = torch.exp(2 * log_noise).mean(0).expand(f.shape[1:])
        return f, f.var(0, correction=0) + noise_var

    # ------------------------------------------------------------ predict
    def predict_draws(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Function values and noise std of every stored draw, in units of ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        f : ndarray of shape (n_draws, n_samples) or (n_draws, n_samples, n_outputs)
        noise_std : ndarray of shape (n_draws,) or (n_draws, n_outputs)
            For heteroscedastic models (deep-ensemble heads) one value per
            point: (n_draws, n_samples) or (n_draws, n_samples, n_outputs).
        """
        f, noise = self._scaled_draws(X)
        if noise.shape[1] == 1:  # one noise level per draw
            return self._shape(to_numpy(f), 2), self._shape(to_numpy(noise[:, 0]), 1)
        return self._shape(to_numpy(f), 2), self._shape(to_numpy(noise), 2)

    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False):
        """Predictive mean, optionally with the total std or covariance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the total predictive std (epistemic + observation noise).
        return_cov : bool, default=False
            Also return the predictive covariance between the points.

        Returns
        -------
        y_mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        y_std : ndarray, same shape as ``y_mean``; only with ``return_std``
        y_cov : ndarray of shape (n_samples, n_samples) or
            (n_samples, n_samples, n_outputs); only with ``return_cov``
        """
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        f, noise = self._scaled_draws(X)
        mean, epistemic, aleatoric = regression_moments(f, noise.pow(2))
        y_mean = self._shape(to_numpy(mean), 1)
        if return_std:
            return y_mean, self._shape(to_numpy((epistemic + aleatoric).sqrt()), 1)
        if return_cov:
            cov = to_numpy(regression_cov(f, noise.pow(2))).transpose(1, 2, 0)
            return y_mean, cov[..., 0] if self._single_output() else cov
        return y_mean

    def predict_std(self, X: Any, kind: str = "total") -> np.ndarray:
        """Predictive standard deviation: ``"total"``, ``"epistemic"`` or ``"aleatoric"``.

        ``total**2 == epistemic**2 + aleatoric**2``: the epistemic part is the
        spread of the posterior draws' function values, the aleatoric part the
        root mean observation-noise variance.
        """
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}. Got {kind!r}.")
        f, noise = self._scaled_draws(X)
        _, epistemic, aleatoric = regression_moments(f, noise.pow(2))
        var = {"total": epistemic + aleatoric, "epistemic": epistemic, "aleatoric": aleatoric}
        return self._shape(to_numpy(var[kind].sqrt()), 1)

    def sample_y(self, X: Any, n_samples: int = 1, random_state: Any = 0) -> np.ndarray:
        """Draw from the posterior predictive (function draw plus observation noise).

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples) or
            (n_samples_X, n_outputs, n_samples), samples last as in
            ``GaussianProcessRegressor.sample_y``.
        """
        if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer. Got {n_samples!r}.")
        f, noise = self._scaled_draws(X)
        gen = make_generator(spawn_seed(random_state), torch.device("cpu"))
        samples = to_numpy(sample_regression(f.cpu(), noise.cpu(), int(n_samples), gen))
        return samples[:, 0, :] if self._single_output() else samples

    def _scaled_draws(self, X: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Means ``(D, n, k)`` and noise stds ``(D, 1 or n, k)`` in units of ``y``."""
        out = self._draws_at(X).to(torch.float64)
        draws = {k: v.to(out.device, torch.float64) for k, v in self.posterior_.flat().items()}
        f, log_noise = self.likelihood_.predictive(out, draws)
        fit = ~self._constant
        scale = torch.as_tensor(self.y_std_[fit], device=f.device)
        shift = torch.as_tensor(self.y_mean_[fit], device=f.device)
        return self._with_constant_columns(f * scale + shift, torch.exp(log_noise) * scale)

    def _with_constant_columns(
        self, f: torch.Tensor, noise: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Insert the constant columns: their value, no spread, the fixed noise or 0."""
        if not self._constant.any():
            return f, noise
        fit = torch.as_tensor(~self._constant, device=f.device)
        value = torch.as_tensor(self._constant_value, dtype=f.dtype, device=f.device)
        full_f = value.expand(*f.shape[:2], len(value)).clone()
        full_noise = torch.full((*noise.shape[:2], len(value)), self._constant_noise,
                                dtype=noise.dtype, device=noise.device)
        full_f[..., fit], full_noise[..., fit] = f, noise
        return full_f, full_noise

    def _single_output(self) -> bool:
        return self._y_ndim == 1 or self.n_outputs_ == 1

    def _shape(self, a: np.ndarray, out_axis: int) -> np.ndarray:
        """Drop the output axis for single-output fits (GaussianProcessRegressor's rule)."""
        return a.take(0, axis=out_axis) if self._single_output() else a


def _moments(Y: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and (population) standard deviations, weighted by ``weights`` when
    given (the moments of the rows repeated by their weights)."""
    if weights is None:
        return Y.mean(0), Y.std(0)
    mean = np.average(Y, axis=0, weights=weights)
    return mean, np.sqrt(np.average((Y - mean) ** 2, axis=0, weights=weights))


def _constant_columns(Y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Columns whose variance is zero up to float64 rounding (the rule of
    scikit-learn's ``StandardScaler``), so unlike ``std == 0`` independent of units;
    with ``weights``, over the rows of positive weight."""
    if weights is not None:
        Y = Y[weights > 0]
    n, eps = len(Y), np.finfo(np.float64).eps
    mean, var = Y.mean(0), Y.var(0)
    return var <= n * eps * var + (n * np.abs(mean) * eps) ** 2
