"""Classification as Gaussian regression on shifted one-hot targets (Hron et al. 2022).

Labels become ``onehot(y) - 1/K`` (the paper's ``-0.1`` for ``K = 10``) and every
output gets Gaussian noise of a fixed std (the paper's 0.1), so the conjugate
readout and its reparametrisation apply unchanged. A draw's outputs ``f``
estimate the class indicators minus ``1/K``. Two ways to turn them into class
probabilities (``proba``), averaged over draws by ``predict_proba``:

* ``"clip"``: ``f + 1/K`` clipped at :data:`FLOOR` and renormalised. The floor
  keeps the log loss finite: a regression onto indicators can put a class's
  output below zero, which would give that class probability 0.
* ``"argmax"``: the probability, under the model's own Gaussian noise, that a
  fresh target of the input is largest for the class,
  ``P_j = E_z prod_{c != j} Phi(z + (f_j - f_c) / sigma)``, ``z ~ N(0, 1)``
  (Gauss-Hermite quadrature, 24 nodes).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from ...likelihoods import gaussian_log_likelihood
from ...nn.functional import Params

__all__ = ["ShiftedOneHotGaussian", "FLOOR"]

FLOOR = 1e-3
"""Smallest unnormalised class probability of a draw."""


class ShiftedOneHotGaussian:
    """Gaussian likelihood of shifted one-hot targets with a fixed noise std.

    Parameters
    ----------
    noise_std : float
        Observation-noise std of every output.
    proba : {"argmax", "clip"}, default="argmax"
        How a draw's outputs become class probabilities (module docstring).

    Examples
    --------
    >>> import torch
    >>> lik = ShiftedOneHotGaussian(0.1, proba="clip")
    >>> lik.targets(torch.tensor([0, 2]), 3)
    tensor([[ 0.6667, -0.3333, -0.3333],
            [-0.3333, -0.3333,  0.6667]])
    >>> lik.probabilities(torch.tensor([[[0.6, -0.5, -0.1]]])).round(decimals=3)
    tensor([[[0.7990, 0.0010, 0.2000]]])
    """

    learned = False

    def __init__(self, noise_std: float, proba: str = "argmax") -> None:
        if proba not in ("clip", "argmax"):
            raise ValueError(f"proba must be 'clip' or 'argmax'. Got {proba!r}.")
        self.proba = proba
        self.noise_std = float(noise_std)
        self.log_noise = np.array([math.log(self.noise_std)])
        self.n_classes = 0

    def n_outputs(self, k: int) -> int:
        """One output per class."""
        self.n_classes = k
        return k

    def init_params(self, n_batch: int, k: int, device, dtype) -> Params:
        """No parameters of its own."""
        return {}

    def targets(self, y: Tensor, k: int | None = None) -> Tensor:
        """``onehot(y) - 1/K`` as floats ``(n, K)``."""
        k = k or self.n_classes
        onehot = torch.nn.functional.one_hot(y.long(), k).to(torch.get_default_dtype())
        return onehot - 1.0 / k

    def log_prob(self, f: Tensor, y: Tensor, params: Params,
                 weights: Tensor | None = None) -> Tensor:
        """Gaussian log-likelihood of the shifted one-hot targets, ``(C,)``, each row's
        term times its weight when ``weights`` are given."""
        t = self.targets(y, f.shape[-1]).to(f)
        return gaussian_log_likelihood(f, t, torch.tensor(math.log(self.noise_std)).to(f),
                                       weights)

    def log_prior(self, params: Params) -> float:
        """No parameters of its own."""
        return 0.0

    def probabilities(self, out: Tensor) -> Tensor:
        """Class probabilities of each draw ``(D, n, K)`` (see ``proba``)."""
        if self.proba == "argmax":
            return torch.cat([_argmax_probabilities(o, self.noise_std)
                              for o in out.split(16)])
        p = (out + 1.0 / out.shape[-1]).clamp_min(FLOOR)
        return p / p.sum(-1, keepdim=True)


def _argmax_probabilities(out: Tensor, sigma: float, n_nodes: int = 24) -> Tensor:
    """``P(argmax_c (f_c + sigma eps_c) = j)`` per draw, point and class ``j``."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)
    z = torch.as_tensor(nodes, dtype=out.dtype, device=out.device)
    w = torch.as_tensor(weights / math.sqrt(2 * math.pi), dtype=out.dtype, device=out.device)
    diff = (out.unsqueeze(-1) - out.unsqueeze(-2)) / sigma  # (D, n, j, c): f_j - f_c
    cdf = torch.special.ndtr(z.view(-1, 1, 1, 1, 1) + diff)  # (Q, D, n, j, c)
    eye = torch.eye(out.shape[-1], dtype=torch.bool, device=out.device)
    terms = torch.where(eye, 1.0, cdf).prod(-1).movedim(0, -1).contiguous()  # (D, n, j, Q)
    # the nodes summed over the last, contiguous dimension: a point's probabilities do not
    # depend on the other rows evaluated with it (a sum over the leading dimension did, by a
    # unit in the last place)
    p = (terms * w).sum(-1)
    return p / p.sum(-1, keepdim=True)
