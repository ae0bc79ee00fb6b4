"""The wide-network posterior as a potential on whitened coordinates.

The Markov chain moves a flat vector ``phi`` ``(C, D)`` whose reference measure
is ``N(0, I)``; the target is ``N(phi; 0, I) exp(-Phi(phi))``.

* ``reparametrize=False``: ``phi`` holds the hidden entries and the readout
  ``theta`` itself; ``Phi`` is the negative log-likelihood.
* ``reparametrize=True`` (Hron et al. 2022): ``phi = (phi_hidden, phi_out)`` and
  the readout is ``theta = mu + S phi_out`` (:func:`.reparam.readout`); ``Phi``
  is the readout's negative log marginal likelihood, a function of the hidden
  entries only.
* ``marginalize_readout=True``: ``phi`` holds the hidden entries only and the
  whitened readout ``phi_out`` is redrawn from ``N(0, I)`` at every step: the
  readout is drawn exactly from its conditional posterior.

With a learned noise (``noise_std="learn"``) ``phi`` starts with ``k`` more
coordinates ``psi``: ``log sigma = loc + scale * psi`` whitens the library's weak
log-normal noise prior (:data:`~skfbnn.likelihoods.NOISE_PRIOR_LOC`, ``_SCALE``), so
the noise is one more coordinate of the reference measure and is sampled with
the weights. Its proposal step is scaled by ``c = min(1, 1 / (scale sqrt(2 n)))``,
the ratio of its posterior to its prior standard deviation, so that one shared
step suits both (:attr:`WideNetTarget.step_scale`).

Precision: the chain (``phi``, the potential, the Cholesky factors and solves) is kept
in the dtype of ``X`` (float64), while the network's features at the training rows and
their gradient, the full-batch work that grows with rows times width, may be computed in
a narrower ``features_dtype`` (:data:`FEATURES_DTYPE`, float32); the Gram of the features
is formed exactly in float64 from them (:func:`.reparam.gram`). The potential is then
that of the network evaluated in float32 arithmetic: a deterministic function of
``phi``, so the Metropolis-Hastings chain is exact for it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ...likelihoods import NOISE_PRIOR_LOC, NOISE_PRIOR_SCALE
from ...nn.functional import Params
from ...priors.weight import NOISE_KEY
from .ntk import NTKLayout
from .reparam import likelihood_potential, marginal_potential, readout, whiten

__all__ = ["WideNetTarget", "FEATURES_DTYPE"]

FEATURES_DTYPE = torch.float32
"""The dtype of the features' forward and backward pass (the samplers' family builds its
targets with it). On protein's 41 157 training rows with pCNL's defaults (four chains, two
GELU layers of 50) a step took 0.38-0.52 s of CPU against 1.87-2.24 s with float64
features, 0.17-0.28 of it in three pairs (the speed page, one thread, a
loaded 2-core machine): PyTorch's float64 GELU is not vectorised (295 ms forward against
11 ms in float32 on ``(4, 41157, 50)``) and the float32 products are faster. The potential
moved by at most 4e-4 (of 1.2e4), differences between nearby states by at most 4e-4 and the
gradient by 1e-6 relative, measured on protein during development; the oracles of
``tests/inference/mh`` pass unchanged."""


class WideNetTarget:
    """Potential, gradient and network parameters of whitened states.

    Parameters
    ----------
    layout : NTKLayout or BodyLayout
        The network's NTK layout (:func:`~.body.ntk_layout`).
    X : Tensor of shape (n, d)
    Y : Tensor of shape (n, k)
        Targets (regression: standardised; classification: shifted one-hot).
    log_noise : Tensor of shape (k,) or None
        Fixed log observation-noise std per output; None: learned (sampled).
    reparametrize, marginalize_readout : bool
        See the module docstring.
    dual : bool or None
        Force the ``n x n`` (True) or ``p x p`` (False) factorisation.
    features_dtype : torch.dtype or None
        The dtype of the features and their gradient; None: that of ``X``.
    weights : Tensor of shape (n,) or None
        Row weights (``sample_weight``): the likelihood is ``prod_i N(y_i; f_i,
        sigma^2)^{w_i}``, exactly that of the rows repeated ``w_i`` times. It is the
        Gaussian of noise ``sigma^2 / w_i`` on row ``i`` times ``sigma^{-(sum w - n)}``
        up to a constant, so the features and targets are scaled by ``sqrt(w_i)``
        (:meth:`features`, ``Y``) and the potential gets ``(sum w - n) log sigma``.
    """

    def __init__(self, layout: NTKLayout, X: Tensor, Y: Tensor, log_noise: Tensor | None, *,
                 reparametrize: bool = True, marginalize_readout: bool = False,
                 dual: bool | None = None, weights: Tensor | None = None,
                 features_dtype: torch.dtype | None = None) -> None:
        self.root_w = None if weights is None else weights.to(X).sqrt().unsqueeze(-1)
        self.features_dtype = X.dtype if features_dtype is None else features_dtype
        self.X_features = X.to(self.features_dtype)
        self.root_w_features = None if self.root_w is None else self.root_w.to(
            self.features_dtype)
        self.extra_rows = 0.0 if weights is None else float(weights.sum()) - len(X)
        n_rows = len(X) if weights is None else float(weights.sum())
        self.layout, self.X = layout, X
        self.Y = Y if self.root_w is None else Y * self.root_w
        self.fixed_log_noise = log_noise
        self.n_noise = Y.shape[-1] if log_noise is None else 0
        self.marginal = reparametrize or marginalize_readout
        self.marginalize_readout = marginalize_readout
        self.dual = dual
        scale = torch.ones(self.n_dim, dtype=X.dtype, device=X.device)
        scale[: self.n_noise] = min(1.0, 1.0 / (NOISE_PRIOR_SCALE * math.sqrt(2 * n_rows)))
        self.step_scale = scale

    def features(self, hidden: Tensor) -> Tensor:
        """Readout features ``(C, n, p)`` at the training inputs in ``features_dtype``,
        each row scaled by the square root of its weight (unscaled without weights)."""
        Psi = self.layout.features(hidden.to(self.features_dtype), self.X_features)
        return Psi if self.root_w is None else Psi * self.root_w_features

    def log_noise(self, phi: Tensor) -> Tensor:
        """Log noise std per chain and output, ``(C, k)``."""
        if self.n_noise:
            return NOISE_PRIOR_LOC + NOISE_PRIOR_SCALE * phi[:, : self.n_noise]
        return self.fixed_log_noise.expand(phi.shape[0], self.Y.shape[-1])

    def whiten_log_noise(self, log_noise: Tensor) -> Tensor:
        """The coordinates ``psi`` of a log noise std."""
        return (log_noise - NOISE_PRIOR_LOC) / NOISE_PRIOR_SCALE

    @property
    def readout_shape(self) -> tuple[int, int]:
        """``(p, k)``."""
        return self.layout.n_features, self.Y.shape[-1]

    @property
    def n_dim(self) -> int:
        """Dimension ``D`` of the state the Metropolis-Hastings step moves."""
        p, k = self.readout_shape
        return self.n_noise + self.layout.n_hidden + (0 if self.marginalize_readout else p * k)

    def split(self, phi: Tensor, phi_out: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Hidden entries ``(C, D_h)`` and whitened readout ``(C, p, k)``."""
        a, b = self.n_noise, self.n_noise + self.layout.n_hidden
        if self.marginalize_readout:
            return phi[:, a:b], phi_out
        return phi[:, a:b], phi[:, b:].reshape(phi.shape[0], *self.readout_shape)

    def potential(self, phi: Tensor) -> Tensor:
        """``Phi(phi)`` per chain, ``(C,)``."""
        hidden, out = self.split(phi, None)
        Psi = self.features(hidden)
        lam = torch.exp(2 * self.log_noise(phi))
        if self.marginal:
            value = marginal_potential(Psi, self.Y, lam, self.dual)
        else:
            value = likelihood_potential(Psi, out, self.Y, lam)
        if self.extra_rows:  # sum_i w_i log sigma, of which the scaled rows give n log sigma
            value = value + 0.5 * self.extra_rows * lam.log().sum(-1)
        return value

    def potential_and_grad(self, phi: Tensor) -> tuple[Tensor, Tensor]:
        """``Phi(phi)`` and its gradient ``(C, D)`` (zero where ``Phi`` is infinite)."""
        leaf = phi.detach().requires_grad_(True)
        with torch.enable_grad():
            value = self.potential(leaf)
            ok = torch.isfinite(value)
            grad = None
            if value.requires_grad:  # not when Phi is constant (no hidden layer)
                (grad,) = torch.autograd.grad(torch.where(ok, value, 0.0).sum(), leaf,
                                              allow_unused=True)
        grad = torch.zeros_like(phi) if grad is None else grad
        return value.detach(), torch.where(ok.unsqueeze(-1), grad, 0.0)

    @torch.no_grad()
    def params(self, phi: Tensor, phi_out: Tensor | None, dtype: torch.dtype) -> Params:
        """The network's ordinary parameters (plus ``log_noise`` when learned)."""
        hidden, out = self.split(phi, phi_out)
        log_noise = self.log_noise(phi)
        if self.marginal:
            out = readout(self.features(hidden).to(self.X.dtype), self.Y,
                          torch.exp(2 * log_noise), out, self.dual)
        params = {k: v.to(dtype) for k, v in self.layout.to_standard(hidden, out).items()}
        if self.n_noise:
            params[NOISE_KEY] = log_noise.to(dtype).clone()
        return params

    @torch.no_grad()
    def whiten(self, params: Params) -> tuple[Tensor, Tensor | None]:
        """Inverse of :meth:`params`: the state ``phi`` and (marginal-conditional
        variant) ``phi_out`` of network parameters."""
        hidden, theta = self.layout.from_standard(
            {k: v.to(self.X.dtype) for k, v in params.items()})
        parts = [hidden]
        if self.n_noise:
            parts.insert(0, self.whiten_log_noise(params[NOISE_KEY].to(self.X.dtype)))
        phi = torch.cat(parts, 1)
        out = theta
        if self.marginal:
            Psi = self.features(hidden).to(self.X.dtype)
            out = whiten(Psi, self.Y, torch.exp(2 * self.log_noise(phi)), theta, self.dual)
        if self.marginalize_readout:
            return phi, out
        return torch.cat([phi, out.flatten(1)], 1), None
