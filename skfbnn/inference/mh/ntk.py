"""The NTK parameterisation of an MLP, as a flat vector of standard-normal entries.

A layer with fan-in ``m`` computes ``sigma_w / sqrt(m) * W h + sigma_b * b`` with
every entry of ``W`` and ``b`` standard normal a priori; the readout uses
``sigma_w_out`` and ``sigma_b_out``. The hidden entries are one flat vector per
chain (what pCN moves); the readout is a ``(p, k)`` matrix ``theta`` acting on the
features ``Psi = [sigma_w_out / sqrt(h) * act(...), sigma_b_out]`` (``p = h + 1``),
so that ``f = Psi @ theta``. :meth:`NTKLayout.to_standard` converts a draw into
the ordinary ``nn.Linear`` parameters of the same network, so predictions use
the library's usual forward.

This is the MLP's batched path; :class:`~.body.BodyLayout` is the same parameterisation
for any ``nn.Sequential`` ending in ``nn.Linear`` (:func:`~.body.ntk_layout` picks).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor, nn

from ...nn.functional import Params

__all__ = ["NTKLayout"]


class NTKLayout(NamedTuple):
    """Layer structure and scales of an NTK-parameterised ``Linear``/activation stack.

    Attributes
    ----------
    layers : tuple of (str, int, int)
        ``(prefix, fan_in, fan_out)`` of every hidden ``Linear``.
    readout : tuple of (str, int, int)
        The same for the readout layer.
    activation : nn.Module
        The (parameter-free) activation between layers.
    sigma_w, sigma_b, sigma_w_out, sigma_b_out : float
        Weight and bias scales of the hidden layers and of the readout.

    Examples
    --------
    >>> import torch
    >>> from skfbnn.nn.mlp import build_mlp
    >>> layout = NTKLayout.from_network(build_mlp(3, 1, (8,), "relu"))
    >>> layout.n_hidden, layout.n_features
    (32, 9)
    >>> g = torch.Generator().manual_seed(0)
    >>> psi = layout.features(torch.randn(2, 32, generator=g), torch.zeros(5, 3))
    >>> tuple(psi.shape)
    (2, 5, 9)
    """

    layers: tuple[tuple[str, int, int], ...]
    readout: tuple[str, int, int]
    activation: nn.Module
    sigma_w: float = math.sqrt(2.0)
    sigma_b: float = 0.1
    sigma_w_out: float = 1.0
    sigma_b_out: float = 0.1

    @classmethod
    def from_network(cls, network: nn.Sequential, sigma_w: float = math.sqrt(2.0),
                     sigma_b: float = 0.1, sigma_w_out: float = 1.0,
                     sigma_b_out: float = 0.1) -> NTKLayout:
        """The layout of a :func:`~skfbnn.nn.mlp.build_mlp` network."""
        linear = [(str(i), m.in_features, m.out_features)
                  for i, m in enumerate(network) if isinstance(m, nn.Linear)]
        acts = [m for m in network if not isinstance(m, nn.Linear)]
        activation = acts[0] if acts else nn.Identity()
        return cls(tuple(linear[:-1]), linear[-1], activation, float(sigma_w),
                   float(sigma_b), float(sigma_w_out), float(sigma_b_out))

    @property
    def n_hidden(self) -> int:
        """Number of hidden-layer entries (weights and biases)."""
        return sum(m * o + o for _, m, o in self.layers)

    @property
    def n_features(self) -> int:
        """Readout input dimension ``p = h + 1``."""
        return self.readout[1] + 1

    @property
    def n_outputs(self) -> int:
        """Network outputs ``k``."""
        return self.readout[2]

    def _unpack(self, hidden: Tensor):
        off, C = 0, hidden.shape[0]
        for _, m, o in self.layers:
            W = hidden[:, off : off + m * o].reshape(C, o, m)
            b = hidden[:, off + m * o : off + m * o + o]
            off += m * o + o
            yield m, W, b

    def features(self, hidden: Tensor, X: Tensor) -> Tensor:
        """Readout features ``Psi`` ``(C, n, p)`` of hidden entries ``(C, D_h)`` at ``X``.

        Computed features by rows, ``W h + b`` with ``h`` ``(C, width, n)`` (as
        :func:`skfbnn.nn.functional.make_forward` does), and returned as a transposed view of
        that ``(C, p, n)`` layout: the Gram ``Psi^T Psi`` is then the product of a
        contiguous matrix with its transpose, which ran 1.5-1.8x faster in float64 than
        from a contiguous ``(C, n, p)`` on protein-sized features, and appending the bias
        feature is one contiguous block.
        """
        C = hidden.shape[0]
        h = X.to(hidden.dtype).mT.expand(C, *X.mT.shape)
        for m, W, b in self._unpack(hidden):
            # the scales applied to the small W and b, not to the (C, width, n) products
            # (baddbmm's alpha and beta cost a pass over them each in the backward)
            pre = torch.baddbmm(self.sigma_b * b.unsqueeze(-1),
                                (self.sigma_w / math.sqrt(m)) * W, h)
            h = self.activation(pre)
        scale = self.sigma_w_out / math.sqrt(self.readout[1])
        ones = torch.full((C, 1, h.shape[-1]), self.sigma_b_out, dtype=h.dtype,
                          device=h.device)
        return torch.cat([scale * h, ones], dim=1).mT

    def from_standard(self, params: Params) -> tuple[Tensor, Tensor]:
        """Inverse of :meth:`to_standard`: hidden entries ``(C, D_h)`` and ``theta``."""
        parts = []
        for prefix, m, _ in self.layers:
            parts.append(params[f"{prefix}.weight"].flatten(1) * (math.sqrt(m) / self.sigma_w))
            parts.append(params[f"{prefix}.bias"] / self.sigma_b)
        prefix, h, _ = self.readout
        w = params[f"{prefix}.weight"].transpose(1, 2) * (math.sqrt(h) / self.sigma_w_out)
        theta = torch.cat([w, (params[f"{prefix}.bias"] / self.sigma_b_out).unsqueeze(1)], 1)
        C = theta.shape[0]
        hidden = torch.cat(parts, 1) if parts else theta.new_zeros((C, 0))
        return hidden, theta

    def to_standard(self, hidden: Tensor, theta: Tensor) -> Params:
        """Ordinary ``nn.Linear`` parameters of the draws: hidden ``(C, D_h)`` and
        readout ``theta`` ``(C, p, k)``."""
        params: Params = {}
        for (prefix, _, _), (m, W, b) in zip(self.layers, self._unpack(hidden), strict=True):
            params[f"{prefix}.weight"] = self.sigma_w / math.sqrt(m) * W
            params[f"{prefix}.bias"] = self.sigma_b * b
        prefix, h, _ = self.readout
        params[f"{prefix}.weight"] = (self.sigma_w_out / math.sqrt(h)
                                      * theta[:, :-1, :].transpose(1, 2))
        params[f"{prefix}.bias"] = self.sigma_b_out * theta[:, -1, :]
        return params
