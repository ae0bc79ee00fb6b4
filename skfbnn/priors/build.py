"""Build the network prior a registry entry names, from the estimator's parameters."""

from __future__ import annotations

import numpy as np
import torch

from ..device import float64_device
from .functional import FunctionalPrior, FunctionPrior
from .gp import GPPrior, make_kernel, same_form
from .measurement import MeasurementSampler
from .params import measurement_points
from .weight import HierarchicalWeightPrior, WeightPrior

__all__ = ["make_prior", "context_points", "absolute_nugget"]


def make_prior(kind: str, hyper: dict, X: torch.Tensor, y: torch.Tensor, n_out: int,
               gen: torch.Generator, classification: bool, start: GPPrior | None = None):
    """The prior object of ``kind`` for training inputs ``X`` and encoded targets ``y``.

    Parameters
    ----------
    kind : {"weight", "function", "ntk"}
        ``"ntk"``: standard-normal entries of the NTK parameterisation, handled by the
        method itself (None is returned); ``"weight"``: an isotropic Gaussian
        (:class:`WeightPrior`), one whose scales are learned
        (:class:`HierarchicalWeightPrior`, ``prior_std`` 'learn' or 'ard') or none
        (``prior_std=None``); ``"function"``: a GP prior fitted to ``(X, y)`` by marginal
        likelihood, at measurement sets drawn around ``X`` (:class:`FunctionPrior`).
    hyper : dict
        The method's parameters (the prior's entries are read by name).
    X, y : Tensor
        Training inputs ``(n, d)`` and encoded targets (standardised values, or labels).
    n_out : int
        Outputs of the network the prior is on (targets or classes).
    gen : torch.Generator
        The fit's generator.
    classification : bool
        Fit the GP to Dirichlet-transformed labels rather than to targets.
    start : GPPrior, optional
        A previous fit's GP prior (``warm_start``): the GP's fit starts from its values
        rather than from the median heuristic (:meth:`GPPrior.fit`).

    Examples
    --------
    >>> make_prior("weight", {"prior_std": 2.0}, None, None, 1, None, False).std
    2.0
    >>> make_prior("ntk", {}, None, None, 1, None, False) is None
    True
    """
    if kind == "ntk":
        return None
    if kind == "weight":
        std = hyper["prior_std"]
        if std in ("learn", "ard"):
            return HierarchicalWeightPrior(ard=std == "ard",
                                           temperature=hyper.get("temperature", 1.0))
        return None if std is None else WeightPrior(std)
    if kind != "function":
        raise ValueError(f"prior kind must be 'weight', 'function' or 'ntk'. Got {kind!r}.")
    X64 = X.to(float64_device(X.device), torch.float64)

    def new_gp(heuristic: bool) -> GPPrior:
        kernel = make_kernel(hyper["kernel"], X64, n_out, heuristic=heuristic)
        return GPPrior(kernel, n_out, hyper["prior_mean"] == "constant").to(X64.device)

    gp = new_gp(heuristic=False) if start is not None and hyper["prior_fit_iter"] > 0 else None
    if gp is None or not same_form(gp, start):  # no start, or of another form: afresh
        gp, start = new_gp(heuristic=True), None
    gp.fit(X64, y, hyper["prior_fit_iter"], gen, classification=classification, start=start)
    sampler = MeasurementSampler(
        X, measurement_points(hyper["n_measurement_points"], len(X)),
        hyper["measurement_train_fraction"], hyper["measurement_margin"],
        context_points(hyper.get("measurement_points"), X),
    )
    functional = FunctionalPrior(gp, sampler, absolute_nugget(hyper["prior_nugget"], gp, X64))
    return FunctionPrior(functional, hyper.get("weight_prior_std"))


def context_points(value, X: torch.Tensor):
    """``measurement_points`` for :class:`MeasurementSampler`: None or a callable as given,
    an array as flat rows ``(m, d)`` on the device and in the dtype of ``X`` (an array whose
    rows have more than one dimension is flattened; the width must be ``d``).

    Examples
    --------
    >>> context_points(np.ones((5, 1, 3)), torch.zeros(2, 3)).shape
    torch.Size([5, 3])
    """
    if value is None or callable(value):
        return value
    points = np.asarray(value, dtype=np.float64)
    flat = points.reshape(len(points), -1) if points.ndim >= 2 else points.reshape(-1, 1)
    if len(flat) == 0 or flat.shape[1] != X.shape[1] or not np.isfinite(flat).all():
        raise ValueError(
            f"measurement_points must be finite rows of {X.shape[1]} values (the training "
            f"rows' width), at least one. Got an array of shape {points.shape}.")
    return torch.as_tensor(flat, dtype=X.dtype).to(X.device)


def absolute_nugget(value: str | float, gp: GPPrior, X: torch.Tensor) -> float:
    """The absolute prior nugget for the ``prior_nugget`` parameter: a number as given, or
    for ``'noise'`` the pre-fitted GP's noise variance, floored at 1% of the prior
    variance."""
    if value != "noise":
        return float(value)
    floor = 0.01 * float(gp.mean_cov(X[:1])[1].mean())
    noise_var = float(gp.noise_std.pow(2).mean())
    return max(noise_var, floor) if noise_var == noise_var else floor  # NaN: not fitted
