"""The driver: minibatches, measurement sets, burn-in, adaptation, thinning, NaN guard.

Run policy lives here, not in the update rules: the driver feeds each step a
fresh minibatch per chain or ensemble member (epoch-wise reshuffling,
independently per chain) and, for functional priors, a fresh measurement set
shared by the chains. Each family's policy (how many steps, what is kept) is
in :mod:`skfbnn.inference.families`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from ..exceptions import divergence_error
from ..nn.functional import Params
from .types import Transform

__all__ = ["RunResult", "MinibatchStream", "run", "run_sampler"]

logger = logging.getLogger("skfbnn")

PERMUTATION_BLOCK_ROWS = 16384
"""Epochs of permutations drawn at once cover about this many rows (at most 64 epochs)."""

SYNC_EVERY = 100
"""Steps between two read-backs of the run's values (the traces, the finiteness of the
objective, the progress report): every other step only queues work, so that a run on an
accelerator never waits for the device in between. On a CPU a read-back after every step cost
the driver about 20 us a step (the speed page: 32 against 13 us a step with
one traced value, 55 against 33 with four), one to two per cent of a small network's step."""
SYNC_SECONDS = 1.0
"""A read-back also happens once this many seconds have passed since the last one (slow
steps, e.g. full-batch Metropolis-Hastings on a large data set, still report progress)."""


class RunResult(NamedTuple):
    """What a run produced.

    Attributes
    ----------
    draws : dict of Tensor
        Kept parameter draws ``(C, S, ...)`` (empty when nothing is kept).
    log_post : Tensor
        Trace ``(T, C)`` of the first info field (the method's objective: log
        posterior for samplers, ELBO or MAP objective for optimisers).
    trace : dict of Tensor
        Every info field, ``(T, C)`` each.
    state : Any
        The final state (optimisation methods build their posterior from it).
    """

    draws: Params
    log_post: Tensor
    trace: dict[str, Tensor] = {}
    state: Any = None


class MinibatchStream:
    """Per-chain minibatch indices with epoch-wise reshuffling.

    Returns ``None`` (full batch) when ``batch_size >= n_data``. With ``pool``
    (``(C, n)`` row indices, e.g. each ensemble member's training rows) the
    minibatches of chain ``c`` come from ``pool[c]`` only.
    """

    def __init__(self, n_data: int, n_chains: int, batch_size: int, gen: torch.Generator,
                 pool: Tensor | None = None):
        if pool is not None:
            n_data = pool.shape[1]
        self.n_data, self.n_chains, self.gen, self.pool = n_data, n_chains, gen, pool
        self.batch_size = min(batch_size, n_data)
        self.per_epoch = n_data // max(self.batch_size, 1)
        # Permutations are drawn for a block of epochs at once and cut into batches
        # (on small data sets an epoch is a single batch, and per-step draws cost
        # more than the batch's forward pass).
        self.epochs_per_block = max(1, min(64, PERMUTATION_BLOCK_ROWS // max(n_data, 1)))
        self._batches: Tensor | None = None
        self._next = 0

    def next(self) -> Tensor | None:
        """Indices of shape ``(C, batch_size)`` or ``None``."""
        if self.pool is not None:
            if self.batch_size >= self.n_data:
                return self.pool
            return self.pool.gather(1, self._next_positions())
        if self.batch_size >= self.n_data:
            return None
        return self._next_positions()

    def _next_positions(self) -> Tensor:
        if self._batches is None or self._next == self._batches.shape[0]:
            E, b = self.epochs_per_block, self.batch_size
            perm = torch.stack([  # randperm is O(n); argsort of random keys was 3x slower
                torch.randperm(self.n_data, generator=self.gen, device=self.gen.device)
                for _ in range(self.n_chains * E)
            ]).reshape(self.n_chains, E, self.n_data)[:, :, : self.per_epoch * b]  # drop remainder
            # (E * per_epoch, C, b): batch t of the block, for every chain
            self._batches = perm.reshape(self.n_chains, -1, b).transpose(0, 1).contiguous()
            self._next = 0
        idx = self._batches[self._next]
        self._next += 1
        return idx


def _rows(data: Tensor, idx: Tensor) -> Tensor:
    """``data[idx]`` for row indices ``idx (C, b)``: one ``index_select`` of the flat
    indices (faster than advanced indexing with several chains)."""
    return data.index_select(0, idx.reshape(-1)).reshape(*idx.shape, *data.shape[1:])


def run(
    transform: Transform,
    params: Params,
    X: Tensor,
    y: Tensor,
    gen: torch.Generator,
    *,
    n_steps: int,
    batch_size: int,
    n_burnin: int = 0,
    thinning: int | None = None,
    measure: Callable[[torch.Generator], Any] | None = None,
    adapt: Callable[[Any, Any, int], Any] | None = None,
    progress: Callable[[int, Tensor], None] | None = None,
    step_name: str = "step_size",
    pool: Tensor | None = None,
    monitor: Callable[[int, Any], None] | None = None,
    weights: Tensor | None = None,
    sync_every: int | None = None,
) -> RunResult:
    """The one driver loop of every family.

    Runs ``n_steps`` updates, feeding each a fresh minibatch per chain (or
    member) and, for functional priors, a fresh measurement set. During the
    first ``n_burnin`` steps ``adapt(state, info, step) -> state`` may tune
    the kernel (burn-in only: the kept chain is then a fixed Markov chain).
    With ``thinning`` set, every ``thinning``-th state after burn-in is kept;
    otherwise only the final state is returned.

    Parameters
    ----------
    transform : Transform
        The method's ``init``/``update`` pair.
    params : dict of Tensor
        Initial positions with a leading chain (member) dimension ``C``.
    X, y : Tensor
        Training inputs ``(N, d)`` and targets ``(N, k)`` or labels ``(N,)``.
    gen : torch.Generator
        The only source of randomness.
    n_steps, batch_size : int
        Number of updates; minibatch size (full batch when ``>= N``).
    n_burnin : int, default=0
        Steps before the first kept draw; ``adapt`` is called only then.
    thinning : int or None
        Keep every ``thinning``-th state after burn-in (samplers).
    measure : callable, optional
        ``measure(gen)`` returns the measurement set of a functional prior.
    adapt : callable, optional
        Burn-in adaptation hook.
    progress : callable, optional
        Called as ``progress(step, objective)`` at every read-back (see
        ``sync_every``), ``objective`` the ``(k, C)`` trace of the first info field
        for the ``k`` steps up to ``step`` since the last call.
    step_name : str
        The step-size parameter named in divergence errors.
    pool : Tensor, optional
        ``(C, n)`` training rows of each chain/member (held-out rows excluded).
    monitor : callable, optional
        Called as ``monitor(step, state)`` after every step (e.g. to score
        held-out rows and keep the best state).
    weights : Tensor, optional
        ``(N,)`` row weights (``sample_weight``); each batch then carries its rows'
        weights as ``"w"`` (see :mod:`skfbnn.inference.objective`).
    sync_every : int, optional
        Steps (default :data:`SYNC_EVERY`) between two read-backs of the steps' values
        (the traces, the finiteness check, ``progress``), which also happen after
        :data:`SYNC_SECONDS` and at the end. In between no step waits for the device; a
        divergence is still reported at the step where the objective became non-finite.

    Raises
    ------
    SamplerDivergenceError
        When the objective or a kept draw becomes NaN or infinite.
    """
    n_chains = next(iter(params.values())).shape[0]
    stream = MinibatchStream(len(X), n_chains, batch_size, gen, pool)

    def next_batch() -> dict:
        idx = stream.next()
        batch = {"x": X, "y": y} if idx is None else {"x": _rows(X, idx), "y": _rows(y, idx)}
        if weights is not None:  # the rows' weights, gathered like the rows
            batch["w"] = weights if idx is None else _rows(weights, idx)
        batch["measure"] = measure(gen) if measure is not None else None
        return batch

    batch = next_batch()
    state = transform.init(params, batch, gen)
    values = _ReadBack(n_steps, n_chains, X.device, step_name, progress,
                       sync_every or SYNC_EVERY)
    kept: dict[str, list[Tensor]] = {k: [] for k in params}
    try:
        for step in range(n_steps):
            if step:
                batch = next_batch()
            state, info = transform.update(state, batch, gen)
            values.add(info)
            if step < n_burnin and adapt is not None:
                state = adapt(state, info, step)
            if thinning and step >= n_burnin and (step - n_burnin + 1) % thinning == 0:
                for k, v in state.params.items():
                    kept[k].append(v.detach().clone())
            if monitor is not None:
                monitor(step, state)
    except Exception:
        values.flush()  # a divergence before the failure is what to report
        raise
    values.flush()
    draws = {k: torch.stack(v, dim=1) for k, v in kept.items() if v}
    if not all(bool(torch.isfinite(v).all()) for v in draws.values()):
        _diverged(n_steps - 1, state.log_post, step_name)
    trace = values.trace
    first = next(iter(trace.values())) if trace else torch.empty((0, n_chains))
    return RunResult(draws, first, trace, state)


class _ReadBack:
    """A run's per-step values, queued on the device and read back every ``every`` steps
    (or :data:`SYNC_SECONDS`) and at the end: written to the traces, checked for
    finiteness (a divergence is reported at the step where it happened) and passed to
    ``progress``."""

    def __init__(self, n_steps: int, n_chains: int, device: torch.device, step_name: str,
                 progress: Callable[[int, Tensor], None] | None, every: int) -> None:
        self.n_steps, self.n_chains, self.device = n_steps, n_chains, device
        self.step_name, self.progress, self.every = step_name, progress, every
        self.trace: dict[str, Tensor] = {}
        self.pending: list = []
        self.done = 0
        self.last = time.perf_counter()

    def add(self, info: Any) -> None:
        """Queue one step's info (no read-back unless one is due)."""
        self.pending.append(info)
        if len(self.pending) >= self.every or time.perf_counter() - self.last >= SYNC_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Trace, check and report the queued steps."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        start, stop = self.done, self.done + len(pending)
        if not self.trace:
            self.trace = {f: torch.empty((self.n_steps, self.n_chains), dtype=torch.float64,
                                         device=self.device) for f in pending[0]._fields}
        for i, trace in enumerate(self.trace.values()):  # one copy per field and block
            trace[start:stop] = torch.stack([info[i].expand(self.n_chains) for info in pending])
        objective = next(iter(self.trace.values()))[start:stop]
        finite = torch.isfinite(objective).all(1)
        if not bool(finite.all()):
            first = int(torch.nonzero(~finite)[0, 0])
            _diverged(start + first, objective[first], self.step_name)
        self.done, self.last = stop, time.perf_counter()
        if self.progress is not None:
            self.progress(stop - 1, objective)


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
    adapt: Callable[[Any, Any, int], Any] | None = None,
) -> RunResult:
    """The sampler run policy: ``n_burnin + n_samples * thinning`` steps, every
    ``thinning``-th kept after burn-in (see :func:`run` for the parameters)."""
    return run(
        transform, params, X, y, gen, n_steps=n_burnin + n_samples * thinning,
        batch_size=batch_size, n_burnin=n_burnin, thinning=thinning, measure=measure,
        adapt=adapt, progress=progress,
    )


def _diverged(step: int, log_post: Tensor, step_name: str = "step_size") -> None:
    chains = torch.nonzero(~torch.isfinite(log_post)).flatten().tolist()
    raise divergence_error(
        step_name, f"the objective of chain(s)/member(s) {chains} became non-finite at "
        f"step {step}")
