"""The regression part: target scaling, Gaussian likelihood, predictive summaries."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.validation import validate_data

from ..device import make_generator, spawn_seed, to_numpy
from ..inference.run import SamplerDivergenceError
from ..likelihoods import GaussianLikelihood, HeteroscedasticGaussianLikelihood
from ..predictive import regression_cov, regression_moments, sample_regression
from ..priors.weight import NOISE_KEY
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
        return validate_data(
            self, X, y, dtype=[np.float64, np.float32], y_numeric=True, multi_output=True
        )

    def _encode_target(self, y: np.ndarray, device, dtype):
        self._y_ndim = y.ndim
        Y = y.reshape(len(y), -1).astype(np.float64)
        self.n_outputs_ = Y.shape[1]
        if self.normalize_y:
            self.y_mean_ = Y.mean(0)
            std = Y.std(0)
            self.y_std_ = np.where(std > 0, std, 1.0)
        else:
            self.y_mean_, self.y_std_ = np.zeros(Y.shape[1]), np.ones(Y.shape[1])
        Yt = torch.as_tensor((Y - self.y_mean_) / self.y_std_, dtype=dtype).to(device)
        return Yt, Y.shape[1]

    def _make_likelihood(self, spec, hyper):
        """Learned noise: shared (a posterior parameter) or per-member heads; or fixed."""
        if self.noise_std != "learn":
            return GaussianLikelihood(self.noise_std / self.y_std_)
        if getattr(spec.module, "NOISE", "shared") == "heads":
            return HeteroscedasticGaussianLikelihood(beta=hyper.get("nll_beta", 0.0))
        return GaussianLikelihood(None)

    def _check_draws(self, draws) -> None:
        # A run can stay finite in float32 while the learned log noise drifts
        # so far that its variance in units of y overflows float64 (seen with
        # SGLD at step_size=10): predictions would then be inf/NaN.
        if NOISE_KEY not in draws:
            return
        log_noise = draws[NOISE_KEY].detach().to("cpu", torch.float64)  # MPS: no float64
        var = (torch.exp(log_noise) * torch.as_tensor(self.y_std_)).pow(2)
        if not bool((torch.isfinite(var) & (var > 0)).all()):
            raise SamplerDivergenceError(
                "The sampler diverged: the learned observation noise left the range of "
                f"float64 (|log noise std| up to {float(log_noise.abs().max()):.3g}). The "
                "step size is most likely too large for this problem: reduce step_size."
            )

    def _probe_summary(self, f: torch.Tensor) -> torch.Tensor:
        return f

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
        scale = torch.as_tensor(self.y_std_, device=f.device)
        shift = torch.as_tensor(self.y_mean_, device=f.device)
        return f * scale + shift, torch.exp(log_noise) * scale

    def _single_output(self) -> bool:
        return self._y_ndim == 1 or self.n_outputs_ == 1

    def _shape(self, a: np.ndarray, out_axis: int) -> np.ndarray:
        """Drop the output axis for single-output fits (GaussianProcessRegressor's rule)."""
        return a.take(0, axis=out_axis) if self._single_output() else a

