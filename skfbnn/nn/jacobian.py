"""Jacobians of a batched MLP's outputs with respect to its parameters.

The linearised methods (ifBNN, ifBDE) need ``J = d f(X_M) / d w`` at a few
hundred points for every chain or member, inside an objective that is itself
differentiated. ``torch.func.vmap(jacrev(...))`` does that through a vmapped
double backward and costs about 350 forward-backward passes of the network
(measured: 85 ms against 0.25 ms on a 13-50-1 net, 5 members, 100 points).
For the ``Linear``/element-wise ``Sequential`` networks of :mod:`skfbnn.nn.mlp`
the Jacobian has a closed form that backpropagation computes once for all
points: with pre-activations ``z_l`` and inputs ``h_{l-1}`` of layer ``l``,

.. math::

    \\frac{\\partial f_o}{\\partial W_l} = \\delta_l\\, h_{l-1}^\\top,\\qquad
    \\frac{\\partial f_o}{\\partial b_l} = \\delta_l,\\qquad
    \\delta_L = e_o,\\quad \\delta_l = (W_{l+1}^\\top \\delta_{l+1}) \\odot \\phi'(z_l),

evaluated with batched tensor products (ordinary autograd operations, so the
result is differentiable again). Other modules fall back to ``torch.func``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.func import jacrev, vmap

from .batched_mlp import is_plain_mlp
from .functional import ModuleForward, Params

__all__ = ["mlp_jacobian", "mlp_ntk", "forward_jacobian", "flat_jacobian"]


def _derivative(act: nn.Module, z: Tensor) -> Tensor:
    """``phi'(z)`` element-wise, differentiable in ``z``."""
    if isinstance(act, nn.Identity):
        return torch.ones_like(z)
    if isinstance(act, nn.Tanh):
        return 1 - act(z).pow(2)  # the activation's own tanh (skfbnn.nn.mlp.Tanh: faster)
    if isinstance(act, nn.Sigmoid):
        s = torch.sigmoid(z)
        return s * (1 - s)
    if isinstance(act, nn.ReLU):
        return (z > 0).to(z.dtype)
    with torch.enable_grad():  # any other element-wise activation (GELU, SiLU)
        leaf = z if z.requires_grad else z.detach().requires_grad_(True)
        (d,) = torch.autograd.grad(act(leaf).sum(), leaf, create_graph=z.requires_grad)
    return d


def _is_plain_mlp(module: nn.Module) -> bool:
    return is_plain_mlp(module)


def mlp_jacobian(module: nn.Module, params: Params, X: Tensor, n_out: int | None = None
                 ) -> tuple[Tensor, dict[str, Tensor]]:
    """Outputs and their Jacobian with respect to every network parameter.

    Parameters
    ----------
    module : torch.nn.Module
        The architecture (a :func:`~skfbnn.nn.mlp.build_mlp` network takes the
        closed-form path).
    params : dict of Tensor
        ``C`` parameter sets (leading dimension); keys not in ``module`` are ignored.
    X : Tensor of shape (M, d) or (C, M, d)
        Inputs shared by the sets, or one slice per set.
    n_out : int, optional
        Differentiate only the first ``n_out`` outputs (e.g. the mean head).

    Returns
    -------
    f : Tensor of shape (C, M, n_out)
        The outputs.
    jac : dict of Tensor
        ``jac[name]`` has shape ``(C, n_out, M, *params[name].shape[1:])``.

    Examples
    --------
    >>> import torch
    >>> from skfbnn.nn.mlp import build_mlp
    >>> from skfbnn.nn.functional import init_params
    >>> net = build_mlp(2, 1, (4,), "tanh")
    >>> p = init_params(net, 3, torch.Generator().manual_seed(0), device=torch.device("cpu"),
    ...                 dtype=torch.float64)
    >>> f, J = mlp_jacobian(net, p, torch.zeros(5, 2, dtype=torch.float64))
    >>> f.shape, J["0.weight"].shape, float(J["2.bias"].min())
    (torch.Size([3, 5, 1]), torch.Size([3, 1, 5, 4, 2]), 1.0)
    """
    names = [n for n, _ in module.named_parameters()]
    if not _is_plain_mlp(module):
        return _generic_jacobian(module, {k: params[k] for k in names}, X, n_out)
    f, backward = _backpropagate(module, params, X, n_out)
    jac: dict[str, Tensor] = {}
    for w_name, b_name, h_in, delta in backward:
        jac[w_name] = delta.unsqueeze(-1) * h_in.unsqueeze(1).unsqueeze(-2)
        jac[b_name] = delta
    return f, {n: jac[n] for n in names}


def _backpropagate(module, params, X, n_out):
    """Outputs and, from the last layer down, ``(weight name, bias name, layer input
    (C, M, in), delta (C, k, M, out))`` with ``delta = d f_o / d z`` of that layer."""
    C = next(iter(params.values())).shape[0]
    h = X.expand(C, *X.shape) if X.dim() == 2 else X
    linears, derivs = [], []  # (weight name, bias name, input h); phi'(z) after each
    for i, layer in enumerate(module):
        if isinstance(layer, nn.Linear):
            w, b = params[f"{i}.weight"], params[f"{i}.bias"]
            linears.append((f"{i}.weight", f"{i}.bias", h))
            h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
        else:
            derivs.append((len(linears) - 1, _derivative(layer, h)))
            h = layer(h)
    k = h.shape[-1] if n_out is None else n_out
    eye = torch.eye(h.shape[-1], dtype=h.dtype, device=h.device)[:k]
    delta = eye[None, :, None, :].expand(C, k, h.shape[1], h.shape[-1])  # (C, k, M, out)
    deriv_of = dict(derivs)
    out = []
    for index in range(len(linears) - 1, -1, -1):
        w_name, b_name, h_in = linears[index]
        if index in deriv_of:  # an activation follows this layer
            delta = delta * deriv_of[index].unsqueeze(1)
        out.append((w_name, b_name, h_in, delta))
        if index:
            delta = delta @ params[w_name].unsqueeze(1)  # (C, k, M, in)
    return h[..., :k], out


def mlp_ntk(module: nn.Module, params: Params, X: Tensor, n_out: int | None = None
            ) -> tuple[Tensor, Tensor]:
    """Outputs and the empirical NTK ``J J^T`` per output, without forming ``J``.

    For a ``Linear`` layer ``<dW f(x), dW f(x')> = (delta . delta') (h . h')`` and the
    bias adds ``delta . delta'``, so the kernel is ``sum_l (D_l D_l^T) * (H_l H_l^T + 1)``
    (``*`` element-wise): ``O(M^2 (in + out))`` per layer instead of ``O(M^2 in out)``.

    Returns
    -------
    f : Tensor of shape (C, M, n_out)
    ntk : Tensor of shape (C, n_out, M, M)

    Examples
    --------
    >>> import torch
    >>> from skfbnn.nn.mlp import build_mlp
    >>> from skfbnn.nn.functional import init_params
    >>> net = build_mlp(2, 1, (4,), "tanh")
    >>> p = init_params(net, 3, torch.Generator().manual_seed(0), device=torch.device("cpu"),
    ...                 dtype=torch.float64)
    >>> X = torch.randn(5, 2, dtype=torch.float64)
    >>> A = flat_jacobian(mlp_jacobian(net, p, X)[1])
    >>> bool(torch.allclose(mlp_ntk(net, p, X)[1], A @ A.transpose(-1, -2)))
    True
    """
    if not _is_plain_mlp(module):
        f, jac = mlp_jacobian(module, params, X, n_out)
        A = flat_jacobian(jac)
        return f, A @ A.transpose(-1, -2)
    f, backward = _backpropagate(module, params, X, n_out)
    ntk = 0.0
    for _, _, h_in, delta in backward:
        gram = (h_in @ h_in.transpose(-1, -2) + 1).unsqueeze(1)  # (C, 1, M, M)
        ntk = ntk + (delta @ delta.transpose(-1, -2)) * gram
    return f, ntk


def _generic_jacobian(module, params, X, n_out):
    return forward_jacobian(ModuleForward(module), params, X, n_out)


def forward_jacobian(forward: ModuleForward, params: Params, X: Tensor,
                     n_out: int | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """:func:`mlp_jacobian` of any module, through its :class:`ModuleForward`.

    ``torch.func.jacrev`` of one parameter set's outputs at one row, ``vmap``-ed over the
    rows and the sets (and over ``X`` together with the sets when it is ``(C, M, d)``);
    differentiable again, as the linearised methods need. Entries of ``params`` that are not
    the module's parameters are ignored, its buffers are constants, and rows are reshaped to
    the forward's ``input_shape``.

    Row by row, because a row's outputs depend on that row alone (the package refuses
    batch normalisation, and predicts in blocks of rows): ``jacrev`` of all ``M`` rows at
    once would backpropagate each of the ``M * k`` outputs through every row, ``M`` times
    the work (``CNN2d`` with eight sets at 100 rows, 10 outputs: 0.61 s against 107 s,
    ``benchmarks/speed.py network --jacobian``).

    Examples
    --------
    >>> import torch
    >>> from skfbnn.nn.functional import init_params
    >>> net = nn.Sequential(nn.Conv1d(1, 2, 3), nn.Tanh(), nn.Flatten(), nn.Linear(4, 1))
    >>> p = init_params(net, 3, torch.Generator().manual_seed(0),
    ...                 device=torch.device("cpu"), dtype=torch.float64)
    >>> f, J = forward_jacobian(ModuleForward(net, (1, 4)), p,
    ...                         torch.randn(5, 4, dtype=torch.float64))
    >>> f.shape, J["0.weight"].shape
    (torch.Size([3, 5, 1]), torch.Size([3, 1, 5, 2, 1, 3]))
    """
    own = forward.own(params)
    buffers = forward.buffers(X.device, X.dtype)

    def row(p, x):  # one set's outputs (k,) at one flat row (d,)
        out = forward.single(p, x.unsqueeze(0), buffers)[0]
        return out if n_out is None else out[..., :n_out]

    dims = (0, None) if X.dim() == 2 else (0, 0)
    f = forward(own, X)
    f = f if n_out is None else f[..., :n_out]
    jac = vmap(vmap(jacrev(row), in_dims=(None, 0)), in_dims=dims)(own, X)  # (C, M, k, *shape)
    return f, {k: v.movedim(2, 1) for k, v in jac.items()}


def flat_jacobian(jac: dict[str, Tensor], scale: dict[str, Tensor] | None = None) -> Tensor:
    """Concatenate per-parameter Jacobians into ``(C, k, M, P)``, optionally times a
    per-parameter scale (``J diag(scale)``, e.g. the variational standard deviations)."""
    parts = []
    for name, J in jac.items():
        if scale is not None:
            J = J * scale[name].reshape(scale[name].shape[0], 1, 1, *scale[name].shape[1:])
        parts.append(J.reshape(*J.shape[:3], -1))
    return torch.cat(parts, dim=-1)
