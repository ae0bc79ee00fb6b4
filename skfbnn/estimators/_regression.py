"""The regression part: target scaling, Gaussian likelihood, predictive summaries."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.utils.validation import validate_data

from ..device import make_generator, spawn_seed, to_numpy
from ..diagnostics import SamplerWarning, predictive_spread
from ..exceptions import (
    ConstantTargetWarning,
    NoiseOnlyFitWarning,
    SamplerDivergenceError,
    SamplerDivergenceWarning,
)
from ..likelihoods import GaussianLikelihood, HeteroscedasticGaussianLikelihood
from ..predictive import regression_cov, regression_moments, sample_regression
from ..priors.weight import NOISE_KEY
from ._base import BayesianNetBase, outputs_at
from ._params import REGRESSION

__all__ = ["BayesianRegressorBase"]

_KINDS = ("total", "epistemic", "aleatoric")
_SPREAD_WARNING = 10.0
"""A predictive spread (:func:`~skfbnn.diagnostics.predictive_spread`) at the training
inputs above this many target standard deviations is reported with a
``SamplerDivergenceWarning``. Sane fits give about 1, and at most a few with very little
data or a dominating prior (the learned noise's weak prior alone has an RMS of 2.9 and
1% of its mass beyond 10)."""
_SPREAD_ERROR = 1e3
"""Above this many target standard deviations ``fit`` raises ``SamplerDivergenceError``:
the predictions would be useless (the noise prior's mass beyond 1e3 is 3e-8)."""
_NOISE_WARNING = 1.5
"""A learned noise std (median over draws and rows) above this many target standard
deviations is reported: a constant at the mean of y has noise 1. Bayes by backprop at its
defaults on 40 rows learned 2.6 (its q at the prior); sane fits stay well below 1."""
_MAX_CHECK_ROWS = 1000


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

    def _encode_target(self, y: np.ndarray, device, dtype):
        """Standardised targets of the columns to learn: constant columns are left out
        (they are predicted as their value, see :meth:`_with_constant_columns`)."""
        self._y_ndim = y.ndim
        Y = y.reshape(len(y), -1).astype(np.float64)
        self.n_outputs_ = Y.shape[1]
        self._constant = _constant_columns(Y)
        self._constant_value = Y.mean(0)
        self._constant_noise = 0.0 if self.noise_std == "learn" else float(self.noise_std)
        if self.normalize_y:
            self.y_mean_ = Y.mean(0)
            self.y_std_ = np.where(self._constant, 1.0, Y.std(0))
        else:
            self.y_mean_, self.y_std_ = np.zeros(Y.shape[1]), np.ones(Y.shape[1])
        fit = ~self._constant
        Yt = (Y[:, fit] - self.y_mean_[fit]) / self.y_std_[fit]
        return torch.as_tensor(Yt, dtype=dtype).to(device), int(fit.sum())

    def _make_likelihood(self, spec, hyper):
        """Learned noise: shared (a posterior parameter) or per-member heads; or fixed."""
        if self.noise_std != "learn":
            return GaussianLikelihood(self.noise_std / self.y_std_[~self._constant])
        if getattr(spec.module, "NOISE", "shared") == "heads":
            return HeteroscedasticGaussianLikelihood(beta=hyper.get("nll_beta", 0.0))
        return GaussianLikelihood(None)

    def _check_fit(self, posterior, forward, likelihood, X, yt, step_name) -> dict[str, Any]:
        """Raise for a diverged fit, report a suspicious one and the constant columns.

        ``diagnostics_["predictive_spread"]`` gets the spread of the predictive
        at the training inputs in target standard deviations, one per output
        (NaN for constant columns; see :func:`~skfbnn.diagnostics.predictive_spread`).
        """
        found = self._constant_warnings()
        n_groups = posterior.shape[0]
        spread = np.full(self.n_outputs_, np.nan)
        by_chain = np.full((n_groups, self.n_outputs_), np.nan)
        noise = np.full(self.n_outputs_, np.nan)
        if yt.shape[1]:
            self._check_noise_range(posterior.flat(), step_name)
            spread[~self._constant], by_chain[:, ~self._constant], noise[~self._constant] = \
                self._spread(posterior, forward, likelihood, X, yt)
            found += self._spread_warnings(spread, by_chain, step_name)
            found += self._noise_warnings(noise)
        return {"warnings": found, "predictive_spread": spread,
                "predictive_spread_by_chain": by_chain, "noise_ratio": noise}

    def _spread(self, posterior, forward, likelihood, X, yt
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`predictive_spread` of the learned columns at (up to 1000) training rows,
        in the network's units, from the outputs that ``predict`` would compute: of all
        draws ``(k,)``, and of each chain's (member's) draws ``(C, k)``; and the median
        learned noise std in standard deviations of y ``(k,)`` (NaN for a fixed noise)."""
        rows = np.unique(np.linspace(0, len(X) - 1, _MAX_CHECK_ROWS).round().astype(int))
        out = outputs_at(posterior, forward, X[rows])
        draws = {k: v.to(out.device, out.dtype) for k, v in posterior.flat().items()}
        f, log_noise = likelihood.predictive(out, draws)
        # A noise_std set by the user is not the run's doing: only learned noise counts.
        noise = to_numpy(torch.exp(log_noise)) if self.noise_std == "learn" else None
        y = to_numpy(yt)
        # The network and its priors work on unit scale (that of standardised targets):
        # with normalize_y=False, targets much smaller than 1 are no sign of divergence.
        scale = np.maximum(y.std(0), 1.0)
        f, y = to_numpy(f), y[rows]
        C, S = posterior.shape
        by_chain = np.stack([
            predictive_spread(f[c * S:(c + 1) * S], None if noise is None
                              else noise[c * S:(c + 1) * S], y, scale) for c in range(C)])
        ratio = np.full(y.shape[1], np.nan) if noise is None else \
            np.median(noise.reshape(-1, noise.shape[-1]), axis=0) / np.maximum(y.std(0), 1e-300)
        # Every chain holds S draws, so the pooled spread is the chains' root mean square.
        with np.errstate(over="ignore", invalid="ignore"):
            pooled = np.sqrt((by_chain**2).mean(0))
        return pooled, by_chain, ratio

    def _noise_warnings(self, ratio: np.ndarray) -> list[SamplerWarning]:
        """A ``"noise"`` warning when the learned noise std exceeds :data:`_NOISE_WARNING`
        standard deviations of y: the fit explains y as noise, worse than its mean would."""
        outputs = np.flatnonzero(ratio > _NOISE_WARNING).tolist()
        if not outputs:
            return []
        where = "" if self._single_output() else f" (output(s) {outputs})"
        return [SamplerWarning(
            "noise",
            f"the learned observation noise is {float(np.nanmax(ratio)):.3g} times the "
            f"standard deviation of y{where}: the fit explains y as noise, worse than "
            "predicting the mean of y. With Bayes by backprop on little data this is the "
            "known collapse of q onto the weight prior, the noise absorbing the prior's "
            "functions; a fixed noise_std, a smaller network or more data avoid it.",
            extra={"noise_ratio": ratio, "outputs": outputs, "threshold": _NOISE_WARNING},
            category=NoiseOnlyFitWarning,
        )]

    def _constant_warnings(self) -> list[SamplerWarning]:
        columns = np.flatnonzero(self._constant).tolist()
        if not columns:
            return []
        what = "y is constant" if self._single_output() else f"y column(s) {columns} are constant"
        std = "zero" if self.noise_std == "learn" else f"the fixed noise_std={self.noise_std!r}"
        return [SamplerWarning(
            "constant",
            f"{what} (zero variance): there is nothing to learn and no scale for the "
            f"observation noise, so no network is fitted to it; it is predicted as its value "
            f"with {std} as predictive standard deviation.",
            extra={"columns": columns}, category=ConstantTargetWarning,
        )]

    def _check_noise_range(self, draws, step_name: str) -> None:
        # A run can stay finite in float32 while the learned log noise drifts
        # so far that its variance in units of y overflows float64 (seen with
        # SGLD at step_size=10): predictions would then be inf/NaN.
        if NOISE_KEY not in draws:
            return
        log_noise = draws[NOISE_KEY].detach().to("cpu", torch.float64)  # MPS: no float64
        var = (torch.exp(log_noise) * torch.as_tensor(self.y_std_[~self._constant])).pow(2)
        if not bool((torch.isfinite(var) & (var > 0)).all()):
            raise SamplerDivergenceError(
                f"The {_what(step_name)} diverged: the learned observation noise left the "
                f"range of float64 (|log noise std| up to {float(log_noise.abs().max()):.3g}). "
                f"The step size is most likely too large for this problem: reduce {step_name}."
            )

    def _spread_warnings(self, spread: np.ndarray, by_chain: np.ndarray,
                         step_name: str) -> list[SamplerWarning]:
        """Raise when all draws together spread above :data:`_SPREAD_ERROR` target
        standard deviations; a ``"spread"`` warning when one chain's (member's) draws
        spread above :data:`_SPREAD_WARNING`. Pooled, one escaped chain of eight is
        diluted about threefold: with ReLU, fSGHMC on 40 rows once had one chain at 28
        and seven at 1.0, a pooled spread of 9.9 and a test std ten times sd(y)."""
        worst = float(np.nanmax(spread))
        if not worst <= _SPREAD_ERROR:  # also NaN/inf
            bad = np.flatnonzero(~(spread <= _SPREAD_ERROR) & ~self._constant).tolist()
            where = "" if self._single_output() else f" (output(s) {bad})"
            raise SamplerDivergenceError(
                f"The {_what(step_name)} diverged: its predictive distribution at the "
                f"training inputs spreads {worst:.3g} times the standard deviation of y "
                f"around the mean of y{where}; a fit of y gives about 1, so the predictions "
                "would be useless. The step size is most likely too large for this problem: "
                f"reduce {step_name}."
            )
        escaped = ~(by_chain <= _SPREAD_WARNING) & ~self._constant  # (C, k)
        outputs = np.flatnonzero(escaped.any(0)).tolist()
        if not outputs:
            return []
        chains = np.flatnonzero(escaped.any(1)).tolist()
        where = "" if self._single_output() else f" (output(s) {outputs})"
        return [SamplerWarning(
            "spread",
            "some draws escaped to implausible values, e.g. a blown-up noise or function: "
            f"at the training inputs the draws of chain(s) or member(s) {chains} spread up "
            f"to {float(np.nanmax(by_chain[escaped])):.3g} times the standard deviation of y "
            f"around the mean of y{where}, all draws together {worst:.3g} (a fit of y gives "
            f"about 1). The step size is likely too large: reduce {step_name}.",
            extra={"predictive_spread": spread, "predictive_spread_by_chain": by_chain,
                   "outputs": outputs, "chains": chains, "threshold": _SPREAD_WARNING},
            category=SamplerDivergenceWarning,
        )]

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



def _constant_columns(Y: np.ndarray) -> np.ndarray:
    """Columns whose variance is zero up to float64 rounding (the rule of
    scikit-learn's ``StandardScaler``), so unlike ``std == 0`` independent of units."""
    n, eps = len(Y), np.finfo(np.float64).eps
    mean, var = Y.mean(0), Y.var(0)
    return var <= n * eps * var + (n * np.abs(mean) * eps) ** 2


def _what(step_name: str) -> str:
    return "sampler" if step_name == "step_size" else "optimisation"
