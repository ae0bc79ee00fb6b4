"""Fitted posterior containers, one per posterior kind of the registry.

Every kind answers the same questions, so prediction, scoring, diagnostics
and pickling are shared: ``shape`` (``(n_chains_or_members, n_draws)``),
``flat()`` (the parameter sets used for prediction, one leading dimension),
``predict_f(forward, X)`` (network outputs ``(C, S, n, n_out)``) and
``to(device, dtype)``. Draws used for prediction are fixed at fit time, so
predictions are deterministic.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from .device import cpu_threads, to_tensor
from .nn.functional import Params

__all__ = ["Particles", "MeanFieldGaussian", "Ensemble", "POSTERIORS", "from_run", "outputs_at",
           "block_rows", "PREDICT_BLOCK_BYTES"]

PREDICT_BLOCK_BYTES = 128 * 2**20
"""Memory for one block of rows at prediction: the rows' activations and outputs in every
stored draw (float64) and the summaries computed from them. Predictions summarised over the
draws (``predict``, ``predict_std``, ``predict_proba``, ``sample_y``) take one block at a
time, so their memory does not grow with rows times draws."""


class _Posterior(ABC):
    """Shared behaviour: prediction through the stored parameter sets."""

    @property
    @abstractmethod
    def shape(self) -> tuple[int, int]:
        """``(n_chains_or_members, n_draws)``."""

    @abstractmethod
    def flat(self) -> Params:
        """The parameter sets used for prediction, one leading dimension."""

    @abstractmethod
    def to(self, device: torch.device, dtype: torch.dtype | None = None) -> _Posterior:
        """A copy on ``device`` (and in ``dtype`` if given)."""

    def for_prediction(self, device: torch.device, dtype: torch.dtype) -> Particles:
        """The prediction draws on ``device`` in ``dtype`` (made from this posterior's
        parameters in ``dtype``), kept for the next call while they take at most
        :data:`PREDICT_BLOCK_BYTES`: a call on one row then neither converts nor rebuilds
        every draw (10 ms of a pCN ``predict`` on one row with 400 draws).

        Examples
        --------
        >>> p = Particles({"w": torch.zeros(2, 3, 4)})
        >>> p.for_prediction(torch.device("cpu"), torch.float64) is p.for_prediction(
        ...     torch.device("cpu"), torch.float64)
        True
        """
        key = (torch.device(device), dtype)
        cached = self.__dict__.get("_for_prediction")
        if cached is not None and cached[0] == key:
            return cached[1]
        particles = Particles(self.to(device, dtype).draws)
        if sum(v.numel() * v.element_size() for v in particles.draws.values()) \
                <= PREDICT_BLOCK_BYTES:
            self._for_prediction = (key, particles)
        return particles

    def __getstate__(self) -> dict[str, Any]:
        """Without the prediction draws kept by :meth:`for_prediction`."""
        state = dict(self.__dict__)
        state.pop("_for_prediction", None)
        return state

    @abstractmethod
    def start(self) -> Params:
        """The parameter sets a warm-started fit continues from, one per chain or member
        (leading dimension as in a run's initial parameters)."""

    @torch.no_grad()
    def predict_f(
        self, forward: Callable[[Params, Tensor], Tensor], X: Tensor, chunk: int = 4096
    ) -> Tensor:
        """Network outputs of every stored parameter set, shape ``(C, S, n, n_out)``."""
        flat = self.flat()
        out = torch.cat([forward(flat, X[i : i + chunk]) for i in range(0, len(X), chunk)], 1)
        return out.reshape(*self.shape, *out.shape[1:])


class Particles(_Posterior):
    """Posterior draws stored as parameter dictionaries of shape ``(C, S, ...)``.

    Parameters
    ----------
    draws : dict of Tensor
        Kept draws, chain-major (``C`` chains by ``S`` draws), ArviZ's
        ``(chain, draw, *shape)`` convention.
    """

    def __init__(self, draws: Params) -> None:
        self.draws = draws

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_chains, n_draws)``."""
        first = next(iter(self.draws.values()))
        return int(first.shape[0]), int(first.shape[1])

    def flat(self) -> Params:
        """Draws with chains and draws merged into one leading dimension."""
        # Explicit sizes: -1 is ambiguous for empty parameters (a network without outputs).
        return {k: v.reshape(v.shape[0] * v.shape[1], *v.shape[2:])
                for k, v in self.draws.items()}

    def to(self, device: torch.device, dtype: torch.dtype | None = None) -> Particles:
        """A copy on ``device`` (and in ``dtype`` if given)."""
        return Particles({k: v.to(device, dtype) for k, v in self.draws.items()})

    def start(self) -> Params:
        """Each chain's last draw."""
        return {k: v[:, -1] for k, v in self.draws.items()}

    @classmethod
    def from_run(cls, result: Any, n_samples: int, gen: torch.Generator) -> Particles:
        """The draws a sampler kept."""
        return cls(result.draws)


class MeanFieldGaussian(_Posterior):
    """A factorised Gaussian ``q(w) = prod N(mean_i, std_i^2)`` with fixed prediction draws.

    Parameters
    ----------
    mean, std : dict of Tensor
        Means ``(C, ...)`` of every parameter and standard deviations of the
        network parameters (keys missing from ``std`` are point estimates,
        e.g. a learned noise).
    eps : dict of Tensor
        Standard-normal noise ``(C, S, ...)`` drawn at fit time: the ``S``
        parameter sets ``mean + std * eps`` make every prediction.
    """

    def __init__(self, mean: Params, std: Params, eps: Params) -> None:
        self.mean, self.std, self.eps = mean, std, eps

    @property
    def shape(self) -> tuple[int, int]:
        """``(C, n_draws)``."""
        first = next(iter(self.eps.values()))
        return int(first.shape[0]), int(first.shape[1])

    @property
    def draws(self) -> Params:
        """The prediction draws ``(C, S, ...)``."""
        S = self.shape[1]
        return {
            k: m.unsqueeze(1) + self.std[k].unsqueeze(1) * self.eps[k] if k in self.std
            else m.unsqueeze(1).expand(-1, S, *m.shape[1:])
            for k, m in self.mean.items()
        }

    def flat(self) -> Params:
        """Prediction draws with one leading dimension."""
        return {k: v.reshape(-1, *v.shape[2:]) for k, v in self.draws.items()}

    def to(self, device: torch.device, dtype: torch.dtype | None = None) -> MeanFieldGaussian:
        """A copy on ``device`` (and in ``dtype`` if given)."""
        move = lambda d: {k: v.to(device, dtype) for k, v in d.items()}  # noqa: E731
        return MeanFieldGaussian(move(self.mean), move(self.std), move(self.eps))

    def start(self) -> Params:
        """The variational means (the scales start afresh)."""
        return dict(self.mean)

    @classmethod
    def from_run(cls, result: Any, n_samples: int, gen: torch.Generator) -> MeanFieldGaussian:
        """The final variational parameters, with ``n_samples`` prediction draws."""
        state = result.state
        mean = {k: v.detach() for k, v in state.mean.items()}
        std = {k: v.detach() for k, v in state.std.items()}
        eps = {
            k: torch.randn((s.shape[0], n_samples, *s.shape[1:]), generator=gen,
                           device=s.device, dtype=s.dtype)
            for k, s in std.items()
        }
        return cls(mean, std, eps)


class Ensemble(_Posterior):
    """Ensemble members ``(M, ...)``: each member is one parameter set.

    Parameters
    ----------
    members : dict of Tensor
        Member parameters with a leading member dimension.
    """

    def __init__(self, members: Params) -> None:
        self.members = members

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_members, 1)``."""
        return int(next(iter(self.members.values())).shape[0]), 1

    @property
    def draws(self) -> Params:
        """Members as ``(M, 1, ...)`` draws."""
        return {k: v.unsqueeze(1) for k, v in self.members.items()}

    def flat(self) -> Params:
        """The members."""
        return self.members

    def to(self, device: torch.device, dtype: torch.dtype | None = None) -> Ensemble:
        """A copy on ``device`` (and in ``dtype`` if given)."""
        return Ensemble({k: v.to(device, dtype) for k, v in self.members.items()})

    def start(self) -> Params:
        """The members."""
        return dict(self.members)

    @classmethod
    def from_run(cls, result: Any, n_samples: int, gen: torch.Generator) -> Ensemble:
        """The final member parameters."""
        return cls({k: v.detach() for k, v in result.state.params.items()})


POSTERIORS: dict[str, type[_Posterior]] = {
    "particles": Particles,
    "mean_field": MeanFieldGaussian,
    "ensemble": Ensemble,
}


def block_rows(posterior: _Posterior, n_bytes: int | None = None,
               row_values: int | None = None) -> int:
    """Rows per block at prediction: ``n_bytes`` (default :data:`PREDICT_BLOCK_BYTES`) over
    what a row takes in float64 through every stored draw.

    A row takes ``row_values`` values per draw, the outputs of every layer of the network
    (:func:`skfbnn.nn.functional.values_per_row`: a convolution's channels times positions);
    without it, twice the output widths of the posterior's weight matrices, which is that
    count for an MLP (each linear layer's outputs and their activations).

    Examples
    --------
    >>> import torch
    >>> draws = {"0.weight": torch.zeros(8, 25, 50, 13), "0.bias": torch.zeros(8, 25, 50),
    ...          "2.weight": torch.zeros(8, 25, 1, 50), "2.bias": torch.zeros(8, 25, 1)}
    >>> block_rows(Particles(draws))   # 200 draws of a 13-50-1 network
    822
    >>> block_rows(Particles(draws), row_values=16 * 40 * 3)  # 16 channels x 40 positions x 3
    43
    """
    n_draws = math.prod(posterior.shape)
    if row_values is None:
        widths = sum(v.shape[1] for v in posterior.start().values() if v.dim() == 3)
        row_values = 2 * widths
    per_row = 8 * n_draws * max(row_values, 1)
    return max(1, (PREDICT_BLOCK_BYTES if n_bytes is None else n_bytes) // per_row)


def outputs_at(posterior: _Posterior, forward: Callable[[Params, Tensor], Tensor],
               X: Any, reduce: Callable[[Tensor, slice], Any] | None = None,
               row_values: int | None = None) -> Any:
    """Network outputs of every draw of ``posterior`` at ``X``: ``(D, n, n_out)``; or, with
    ``reduce``, its summaries, computed one block of rows at a time.

    Computed in float64 (float32 only on devices without float64), so that they
    do not depend on the row order of ``X`` beyond float64 rounding. The network runs on
    blocks of :func:`block_rows` rows either way.

    Parameters
    ----------
    reduce : callable, optional
        ``reduce(outputs, rows)`` of the outputs ``(D, m, n_out)`` of the block of rows
        ``rows`` (a slice of ``X``'s rows) returns a Tensor, or a tuple of them, with those
        rows as its first dimension; the blocks' results are concatenated along it. Memory
        then stays within about :data:`PREDICT_BLOCK_BYTES` beside the results.
    row_values : int, optional
        Values one row makes through the network, per draw (see :func:`block_rows`).
    """
    first = next(iter(posterior.start().values()))
    dtype = first.dtype if first.device.type == "mps" else torch.float64
    posterior = posterior.for_prediction(first.device, dtype)
    X = X.to(first.device, dtype) if torch.is_tensor(X) else to_tensor(X, first.device, dtype)
    rows = block_rows(posterior, row_values=row_values)
    with cpu_threads(first.device):  # as in fit: small ops, threads only contend
        if reduce is None:
            f = posterior.predict_f(forward, X, rows)
            return f.reshape(f.shape[0] * f.shape[1], *f.shape[2:])
        results: list[Tensor] = []
        for i in range(0, len(X), rows):
            f = posterior.predict_f(forward, X[i : i + rows], rows)
            block = slice(i, min(i + rows, len(X)))
            part = reduce(f.reshape(f.shape[0] * f.shape[1], *f.shape[2:]), block)
            single = torch.is_tensor(part)
            part = (part,) if single else part
            if not results:  # written in place: no block's result is kept between the
                # blocks' temporaries, which made the heap grow with the rows (glibc)
                results = [r.new_empty((len(X), *r.shape[1:])) for r in part]
            for result, values in zip(results, part, strict=True):
                result[block] = values
    return results[0] if single else tuple(results)


def from_run(kind: str, result: Any, n_samples: int, gen: torch.Generator) -> _Posterior:
    """The fitted posterior of kind ``kind`` from a run's result."""
    return POSTERIORS[kind].from_run(result, n_samples, gen)
