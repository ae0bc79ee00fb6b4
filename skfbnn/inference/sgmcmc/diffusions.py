"""Pieces shared by the Langevin-type rules: noise, step size, preconditioner.

The preconditioner is the diagonal of Li et al. (2016, pSGLD) and Springenberg
et al. (2016, scale-adapted SGHMC): an inverse mass
``M^{-1} = 1 / max(sqrt(v), 1)`` with ``v`` the running mean of squared
(full-data scaled) log-posterior gradients. It is adapted during burn-in only
and frozen afterwards, so the kept chain runs a fixed-metric diffusion whose
stationary law is the posterior (no correction term for a varying metric).
"""

from __future__ import annotations

from numbers import Real
from typing import NamedTuple

import torch
from torch import Tensor

from ..._hyper import Param, param
from ..._validation import Interval, StrOptions
from ...nn.functional import Params

__all__ = [
    "PRECONDITIONERS",
    "Preconditioner",
    "adapt_preconditioner",
    "init_preconditioner",
    "rescale_preconditioner",
    "noise_like",
    "noises_like",
    "noise_std",
    "preconditioner_param",
    "step_size_param",
    "update_step",
]

PRECONDITIONERS = ("identity", "adaptive")
_DECAY = 0.99  # running mean of squared gradients (RMSprop's), bias-corrected as Adam's
_FLOOR = 1.0
"""Floor of the gradient RMS: ``M^{-1} <= 1``. At stationarity the mean squared
gradient equals the mean curvature, which the unit-scale weight prior (and the
noise prior) bound below by about 1, so the floor only stops a parameter whose
gradient happens to vanish early in burn-in from getting a huge noise."""


SMALL_DATA = 256
"""Below this many training rows the adaptive step no longer grows as the data shrink."""
LARGE_DATA = 1024
"""Above this many training rows the adaptive step no longer shrinks as the data grow."""


def step_size_param(default: float) -> Param:
    """The ``step_size`` parameter of a Langevin-type kernel, with its default."""
    return param("step_size", default, [Interval(Real, 0, None, closed="neither")], "float",
                 "Step size per datum: the update uses ``step_size / n_train`` (with the "
                 f"adaptive preconditioner ``step_size / clip(n_train, {SMALL_DATA}, "
                 f"{LARGE_DATA})``) so the same value suits data sets of any size.")


def update_step(step_size: float, n_data: int, preconditioner: str = "identity") -> float:
    """The per-update step of a Langevin-type kernel.

    ``step_size / n_data`` keeps the minibatch-gradient noise (variance
    ``~ n_data^2 / batch``) at a fixed share of the injected noise. With the
    adaptive preconditioner the drift ``step M^{-1} grad`` is of order ``step``
    whatever the data size, and the step is clipped at both ends:

    - below ``SMALL_DATA`` rows the minibatch noise no longer dominates the
      gradient RMS that sets the metric, the step's stability is governed by
      the curvature alone, and the step stops growing (on 40 rows
      ``step_size / 40`` ran hot and diverged);
    - above ``LARGE_DATA`` rows it stops shrinking, as the drift of the
      scale-adapted SGHMC (Springenberg et al. 2016) does not shrink with the
      data: at ``step_size / n_train`` a fixed number of passes moved the
      weights too little on kin8nm and protein (validation log-likelihood
      1.17 -> 1.27 and -3.04 -> -2.90 with the clip). The minibatch noise then
      exceeds the injected noise it replaces (floored at zero), the price of
      the larger step on large data, where the posterior is narrow.

    Examples
    --------
    >>> update_step(0.5, 512, "adaptive"), update_step(0.5, 40, "adaptive")
    (0.0009765625, 0.001953125)
    >>> update_step(0.5, 40000, "adaptive") == update_step(0.5, 1024, "adaptive")
    True
    >>> update_step(0.5, 40)
    0.0125
    """
    if preconditioner == "adaptive":
        return step_size / min(max(n_data, SMALL_DATA), LARGE_DATA)
    return step_size / n_data


def preconditioner_param(default: str) -> Param:
    """The ``preconditioner`` parameter of a Langevin-type kernel, with its default."""
    return param("preconditioner", default, [StrOptions(set(PRECONDITIONERS))], "str",
                 "'identity', or 'adaptive': a diagonal inverse mass 1 / sqrt(mean squared "
                 "gradient), adapted during burn-in and frozen afterwards (pSGLD, Li et al. "
                 "2016; scale-adapted SGHMC, Springenberg et al. 2016), so one step size "
                 "suits every parameter and data set.")


class Preconditioner(NamedTuple):
    """Running mean of squared gradients and the inverse mass it gives.

    ``inverse_mass`` is ``None`` for the identity metric. ``scale`` ``(C,)``, when
    set, multiplies each chain's inverse mass, which is the same as multiplying
    its step size (the curvature cap of :mod:`.curvature` sets it).
    """

    square_mean: Params | None
    inverse_mass: Params | None
    count: int
    scale: Tensor | None = None


def _per_chain(scale: Tensor, like: Tensor) -> Tensor:
    """``scale`` ``(C,)`` shaped to broadcast against a parameter ``(C, ...)``."""
    return scale.to(like).view(-1, *([1] * (like.dim() - 1)))


def rescale_preconditioner(pre: Preconditioner, scale: Tensor) -> Preconditioner:
    """``pre`` with each chain's inverse mass multiplied by ``scale / pre.scale``
    (so the scales do not compound); kept by later burn-in adaptation."""
    if pre.inverse_mass is None:
        raise ValueError("Only an adaptive preconditioner can be rescaled.")
    old = pre.scale if pre.scale is not None else torch.ones_like(scale)
    ratio = scale / old
    inverse_mass = {k: v * _per_chain(ratio, v) for k, v in pre.inverse_mass.items()}
    return pre._replace(inverse_mass=inverse_mass, scale=scale)


def init_preconditioner(params: Params, kind: str) -> Preconditioner:
    """The identity metric, or an adaptive one with no gradients seen yet."""
    if kind == "identity":
        return Preconditioner(None, None, 0)
    if kind != "adaptive":
        raise ValueError(f"preconditioner must be one of {PRECONDITIONERS}. Got {kind!r}.")
    zeros = {k: torch.zeros_like(v) for k, v in params.items()}
    return Preconditioner(zeros, {k: torch.ones_like(v) for k, v in params.items()}, 0)


def adapt_preconditioner(pre: Preconditioner, grads: Params, step: int,
                         n_adapt: int) -> Preconditioner:
    """Fold ``grads`` into the running mean while ``step < n_adapt``; else freeze."""
    if pre.square_mean is None or step >= n_adapt:
        return pre
    count = pre.count + 1
    # fused forms of DECAY v + (1 - DECAY) g^2 and 1 / max(sqrt(v / correction), FLOOR)
    square_mean = {k: (_DECAY * v).addcmul_(grads[k], grads[k], value=1 - _DECAY)
                   for k, v in pre.square_mean.items()}
    correction = 1 - _DECAY ** count
    inverse_mass = {k: (v / correction).clamp_min_(_FLOOR**2).rsqrt_()
                    for k, v in square_mean.items()}
    if pre.scale is not None:
        inverse_mass = {k: v * _per_chain(pre.scale, v) for k, v in inverse_mass.items()}
    return Preconditioner(square_mean, inverse_mass, count, pre.scale)


def scaled(pre: Preconditioner, key: str, value: Tensor | float) -> Tensor | float:
    """``M^{-1} value`` for parameter ``key``."""
    return value if pre.inverse_mass is None else pre.inverse_mass[key] * value


def noise_std(pre: Preconditioner, key: str, variance: float, eta: float,
              batch_fraction: float = 1.0) -> Tensor | float:
    """Std of the injected noise with covariance ``variance * M^{-1}``.

    With an adaptive preconditioner and minibatch gradients (``batch_fraction``
    = minibatch size / ``n_train`` below 1), the minibatch noise already adds
    ``eta^2 M^{-1} V M^{-1}`` per step, which is subtracted (Springenberg et
    al. 2016, Eq. 12), floored at zero. ``V``, the minibatch-gradient
    variance, is estimated from the running mean of squared gradients ``v =
    M^2`` that defines the metric; but ``v`` also holds the squared full-data
    gradient, which at stationarity is about the curvature ``H``. With the
    Fisher information per datum standing in for the curvature, ``V ~= H (N/b -
    1)`` and ``v ~= H N / b``, so the noise share of ``v`` is ``1 - b/N`` and the
    subtraction is ``eta^2 (1 - b/N)`` (times the square of a chain's ``scale``,
    which multiplies ``M^{-1}``). (Subtracting all of ``eta^2`` left too
    little noise when batches are a large part of the data: on 100 rows of
    Boston, batch 64, SGHMC's predictive was too narrow, test LL down to -72.)

    Examples
    --------
    >>> import torch
    >>> pre = Preconditioner({"w": torch.ones(1)}, {"w": torch.ones(1)}, 1)
    >>> round(float(noise_std(pre, "w", 0.5, 0.1, batch_fraction=0.75) ** 2), 6)  # 0.5 - 0.01/4
    0.4975
    """
    if pre.inverse_mass is None:
        return variance**0.5
    var = variance * pre.inverse_mass[key]
    if batch_fraction < 1.0:
        shared = eta**2 * (1.0 - batch_fraction)
        var = var - (shared if pre.scale is None else shared * _per_chain(pre.scale, var) ** 2)
    return var.clamp_min(0.0).sqrt()


def noise_like(p: Tensor, gen: torch.Generator) -> Tensor:
    """Standard normal noise with ``p``'s shape, dtype and device, drawn from ``gen``."""
    return torch.randn(p.shape, generator=gen, device=p.device, dtype=p.dtype)


def noises_like(params: Params, gen: torch.Generator) -> Params:
    """Standard normal noise shaped like every tensor of ``params``, from one draw
    of ``gen`` (one call per step instead of one per tensor; same law)."""
    first = next(iter(params.values()))
    flat = torch.randn(sum(v.numel() for v in params.values()), generator=gen,
                       device=first.device, dtype=first.dtype)
    out, start = {}, 0
    for k, v in params.items():
        out[k] = flat[start : start + v.numel()].view(v.shape)
        start += v.numel()
    return out
