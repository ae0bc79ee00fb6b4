"""The sampling driver: minibatches, measurement sets, burn-in, thinning, NaN guard.

Run policy lives here, not in the update rules: the driver feeds each step a
fresh minibatch per chain (epoch-wise reshuffling, independently per chain)
and, for functional priors, a fresh measurement set shared by the chains.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from ..nn.functional import Params
from .types import Transform

__all__ = ["SamplerDivergenceError", "RunResult", "MinibatchStream", "run_sampler"]

logger = logging.getLogger("skfbnn")


class SamplerDivergenceError(RuntimeError):
    """The sampler produced NaN or infinite values."""


class RunResult(NamedTuple):
    """Kept draws ``(C, S, ...)`` per parameter and the log-posterior trace ``(T, C)``."""

    draws: Params
    log_post: Tensor


class MinibatchStream:
    """Per-chain minibatch indices with epoch-wise reshuffling.

    Returns ``None`` (full batch) when ``batch_size >= n_data``.
    """

    def __init__(self, n_data: int, n_chains: int, batch_size: int, gen: torch.Generator):
        self.n_data, self.n_chains, self.gen = n_data, n_chains, gen
        self.batch_size = min(batch_size, n_data)
        self._perm: Tensor | None = None
        self._pos = n_data

    def next(self) -> Tensor | None:
        """Indices of shape ``(C, batch_size)`` or ``None``."""
        if self.batch_size >= self.n_data:
            return None
        if self._pos + self.batch_size > self.n_data:
            keys = torch.rand(
                (self.n_chains, self.n_data), generator=self.gen, device=self.gen.device
            )
            self._perm = keys.argsort(dim=1)
            self._pos = 0
        idx = self._perm[:, self._pos : self._pos + self.batch_size]
        self._pos += self.batch_size
        return idx


def run_sampler(
    transform: Transform,
    params: Params,
    X: Tensor,
    y: Tensor,
    gen: torch.Generator,
    *,
    n_burnin: int,
    n_samples: int,
    thinning: int,
    batch_size: int,
    measure: Callable[[torch.Generator], Any] | None = None,
    progress: Callable[[int, Tensor], None] | None = None,
) -> RunResult:
    """Run ``n_burnin + n_samples * thinning`` steps and keep every ``thinning``-th.

    Parameters
    ----------
    transform : Transform
        The method's ``init``/``update`` pair.
    params : dict of Tensor
        Initial positions with a leading chain dimension ``C``.
    X, y : Tensor
        Training inputs ``(N, d)`` and targets ``(N, k)`` or labels ``(N,)``.
    gen : torch.Generator
        The only source of randomness.
    n_burnin, n_samples, thinning, batch_size : int
        Run policy; ``n_samples`` draws are kept per chain.
    measure : callable, optional
        ``measure(gen)`` returns the measurement set of a functional prior.
    progress : callable, optional
        Called as ``progress(step, log_post)`` after every step.

    Raises
    ------
    SamplerDivergenceError
        When the log posterior or a kept draw becomes NaN or infinite.
    """
    n_chains = next(iter(params.values())).shape[0]
    stream = MinibatchStream(len(X), n_chains, batch_size, gen)
    state = transform.init(params)
    n_steps = n_burnin + n_samples * thinning
    trace = torch.empty((n_steps, n_chains), dtype=torch.float64, device=X.device)
    kept: dict[str, list[Tensor]] = {k: [] for k in params}
    for step in range(n_steps):
        idx = stream.next()
        batch = {"x": X, "y": y} if idx is None else {"x": X[idx], "y": y[idx]}
        batch["measure"] = measure(gen) if measure is not None else None
        state, info = transform.update(state, batch, gen)
        trace[step] = info.log_post
        if not bool(torch.isfinite(info.log_post).all()):
            _diverged(step, info.log_post)
        if step >= n_burnin and (step - n_burnin + 1) % thinning == 0:
            for k, v in state.params.items():
                kept[k].append(v.detach().clone())
        if progress is not None:
            progress(step, info.log_post)
    draws = {k: torch.stack(v, dim=1) for k, v in kept.items()}
    if not all(bool(torch.isfinite(v).all()) for v in draws.values()):
        _diverged(n_steps - 1, state.log_post)
    return RunResult(draws, trace)


def _diverged(step: int, log_post: Tensor) -> None:
    chains = torch.nonzero(~torch.isfinite(log_post)).flatten().tolist()
    raise SamplerDivergenceError(
        f"The sampler diverged at step {step} (non-finite log posterior in chain(s) "
        f"{chains}). The step size is most likely too large for this problem: "
        "reduce step_size (or use normalize_y=True and standardised inputs)."
    )
