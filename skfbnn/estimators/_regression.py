"""The regression part: target scaling, Gaussian likelihood, predictive summaries."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from sklearn.utils.validation import check_is_fitted, validate_data

from ..device import make_generator, spawn_seed, to_numpy
from ..diagnostics.health import regression_checks
from ..likelihoods import GaussianLikelihood, HeteroscedasticGaussianLikelihood
from ..predictive import regression_cov
from ._base import BayesianNetBase
from ._network import flat_rows
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
        X = flat_rows(self, X)
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
        if return_cov:  # (n, n): all rows at once
            f, noise = self._scaled_draws(X)
            mean, _, _ = draw_moments(f, noise.pow(2))
            cov = to_numpy(regression_cov(f, noise.pow(2))).transpose(1, 2, 0)
            return self._shape(to_numpy(mean), 1), cov[..., 0] if self._single_output() else cov
        kinds = ("mean", "total") if return_std else ("mean",)
        moments = self._scaled_draws(X, _summaries(kinds))
        y = tuple(self._shape(to_numpy(m), 1) for m in moments)
        return y if return_std else y[0]

    def predict_std(self, X: Any, kind: str = "total") -> np.ndarray:
        """Predictive standard deviation: ``"total"``, ``"epistemic"`` or ``"aleatoric"``.

        ``total**2 == epistemic**2 + aleatoric**2``: the epistemic part is the
        spread of the posterior draws' function values, the aleatoric part the
        root mean observation-noise variance.
        """
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}. Got {kind!r}.")
        (std,) = self._scaled_draws(X, _summaries((kind,)))
        return self._shape(to_numpy(std), 1)

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
        check_is_fitted(self)
        X = validate_data(self, flat_rows(self, X), reset=False, dtype=[np.float64, np.float32])
        # The draws of skfbnn.predictive.sample_regression, for every row at once (so that
        # the samples do not depend on the blocks); each block of rows then uses its share.
        gen = make_generator(spawn_seed(random_state), torch.device("cpu"))
        which = torch.randint(math.prod(self.posterior_.shape), (int(n_samples),),
                              generator=gen, device=gen.device)
        eps = torch.randn((int(n_samples), len(X), self.n_outputs_), generator=gen,
                          device=gen.device, dtype=torch.float64)

        def sample(f, noise, rows):  # (m, k, n_samples)
            f, noise = f.cpu(), noise.cpu()
            return (f[which] + noise[which] * eps[:, rows]).permute(1, 2, 0)

        (samples,) = self._scaled_draws(X, lambda f, noise, rows: (sample(f, noise, rows),))
        samples = to_numpy(samples)
        return samples[:, 0, :] if self._single_output() else samples

    def _scaled_draws(self, X: Any, reduce: Any = None) -> Any:
        """Means ``(D, n, k)`` and noise stds ``(D, 1 or n, k)`` in units of ``y``; with
        ``reduce``, ``reduce(f, noise, rows)`` of each block of rows (a tuple of Tensors with
        the rows first), concatenated (memory bounded, :func:`skfbnn.posterior.outputs_at`)."""
        check_is_fitted(self)
        first = next(iter(self.posterior_.start().values()))
        draws = self.posterior_.for_prediction(first.device, torch.float64).flat()
        fit = ~self._constant

        def scaled(out: torch.Tensor, rows: slice) -> Any:
            out = out.to(torch.float64)
            params = {k: v.to(out.device) for k, v in draws.items()}
            f, log_noise = self.likelihood_.predictive(out, params)
            scale = torch.as_tensor(self.y_std_[fit], device=f.device)
            shift = torch.as_tensor(self.y_mean_[fit], device=f.device)
            f, noise = self._with_constant_columns(f * scale + shift,
                                                   torch.exp(log_noise) * scale)
            return (f, noise) if reduce is None else reduce(f, noise, rows)

        if reduce is None:
            return scaled(self._draws_at(X), slice(None))
        return self._draws_at(X, scaled)

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


def draw_moments(f: torch.Tensor, noise_var: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`skfbnn.predictive.regression_moments` with the draws moved to the last,
    contiguous dimension before they are reduced: a row's summaries are then the same
    numbers whichever rows share its block (torch sums over a leading dimension in an order
    that depends on the size of the others, which moved results by a unit in the last
    place between blocks)."""
    draws_last = f.movedim(0, -1).contiguous()  # (n, k, D)
    mean = draws_last.mean(-1)
    epistemic = draws_last.var(-1, correction=0)
    aleatoric = noise_var.movedim(0, -1).contiguous().mean(-1).expand_as(mean)
    return mean, epistemic, aleatoric


def _summaries(kinds: tuple[str, ...]):
    """``reduce(f, noise, rows)`` for :meth:`BayesianRegressorBase._scaled_draws`: the
    predictive ``"mean"`` and the ``"total"``, ``"epistemic"`` or ``"aleatoric"`` std of a
    block of rows, each ``(m, k)``, in the order of ``kinds``."""

    def reduce(f: torch.Tensor, noise: torch.Tensor, rows: slice) -> tuple:
        mean, epistemic, aleatoric = draw_moments(f, noise.pow(2))
        values = {"mean": lambda: mean, "total": lambda: (epistemic + aleatoric).sqrt(),
                  "epistemic": epistemic.sqrt, "aleatoric": lambda: aleatoric.sqrt()}
        return tuple(values[kind]() for kind in kinds)

    return reduce


def _constant_columns(Y: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Columns whose variance is zero up to float64 rounding (the rule of
    scikit-learn's ``StandardScaler``), so unlike ``std == 0`` independent of units;
    with ``weights``, over the rows of positive weight."""
    if weights is not None:
        Y = Y[weights > 0]
    n, eps = len(Y), np.finfo(np.float64).eps
    mean, var = Y.mean(0), Y.var(0)
    return var <= n * eps * var + (n * np.abs(mean) * eps) ** 2
