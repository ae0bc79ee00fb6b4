"""The randomised-function term of ifBDE (He, Lakshminarayanan & Teh, 2020).

Every member ``c`` gets a fixed random function added to its network,

.. math::

    \\tilde f_c(x) = f(x; w_c) + g_c(x),\\qquad
    g_c(x) = J(x; w_{c,0})\\, w^*_c,\\qquad
    w^*_c = \\mathrm{concat}(\\tilde w_c^{\\,<L}, 0),

with ``w_{c,0}`` the member's initial weights and ``w~_c`` an independent draw of
the initialisation distribution, zero on the readout layer. The network is in the
standard parameterisation (:func:`~skfbnn.nn.functional.init_params`: a layer with
fan-in ``m`` starts uniform on ``[-1/sqrt(m), 1/sqrt(m)]``); ``w~`` is Gaussian with
the same variance ``1/(3m)`` per entry, which is exactly the NTK parameterisation's
standard-normal draw mapped through its ``sigma / sqrt(m)`` scaling (``sigma_w^2 =
1/3``; the bias of a layer with fan-in ``m`` has variance ``1/(3m)``). Given
``w_0``, ``g`` is therefore exactly ``GP(0, Theta^{<L})``, the hidden layers' part
of the empirical NTK ``J Sigma_0 J^T`` at the initial weights (``Sigma_0`` the
initialisation variances), and ``f_0 + g`` has the whole NTK as its covariance in
the infinite-width limit (He et al., Eq. 17-18 of the ifBNN paper). Only the
function outputs get ``g``: for variance heads (``2k`` outputs) the last ``k``
are left alone.

The term lives in the members' parameter dictionaries, under reserved keys
(:data:`PREFIX`): the initial weights ``w_0``, the direction ``w*`` and an output
mask. The update rule never moves them, the held-out monitor, the fitted
:class:`~skfbnn.posterior.Ensemble` and pickles carry them with the members, and
:func:`randomized` turns a network's ``forward`` into that of ``f~``. ``g`` is a
forward-mode Jacobian-vector product (:mod:`torch.autograd.forward_ad`) batched over members,
so the Jacobian is never formed.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.autograd import forward_ad

from ...nn.functional import Params, init_rule, readout_names

__all__ = ["PREFIX", "draw", "split", "offset", "randomized"]

PREFIX = "random_function."
_INIT, _DIRECTION, _MASK = PREFIX + "init.", PREFIX + "direction.", PREFIX + "outputs"

Forward = Callable[[Params, Tensor], Tensor]


def draw(network: nn.Module, params: Params, gen: torch.Generator,
         n_function_outputs: int | None = None, n_outputs: int | None = None) -> Params:
    """The reserved entries of every member's random function, ``(C, ...)`` each.

    Parameters
    ----------
    network : torch.nn.Module
        The architecture; the readout's parameters
        (:func:`~skfbnn.nn.functional.readout_names`) and those that start at a constant
        (a normalisation layer's) get a zero direction, every other parameter one of the
        variance of its initialisation (:func:`~skfbnn.nn.functional.init_rule`).
    params : dict of Tensor
        The members' initial parameters ``w_0`` (other keys are ignored).
    gen : torch.Generator
        Source of ``w~``.
    n_function_outputs : int, optional
        Outputs that receive ``g`` (the first ones); all when None.
    n_outputs : int, optional
        The network's outputs; None: the length of its last parameter (an MLP's readout
        bias).

    Returns
    -------
    dict of Tensor
        ``random_function.init.<name>``, ``random_function.direction.<name>`` for every
        network parameter and ``random_function.outputs`` (a 0/1 mask ``(C, n_out)``).

    Examples
    --------
    >>> from skfbnn.nn.mlp import build_mlp
    >>> from skfbnn.nn.functional import init_params
    >>> net = build_mlp(1, 1, (3,), "tanh")
    >>> gen = torch.Generator().manual_seed(0)
    >>> w0 = init_params(net, 2, gen, device=torch.device("cpu"), dtype=torch.float64)
    >>> rf = draw(net, w0, gen)
    >>> float(rf["random_function.direction.2.weight"].abs().max())  # the readout
    0.0
    >>> rf["random_function.outputs"].shape
    torch.Size([2, 1])
    """
    own = dict(network.named_parameters())
    names = list(own)
    readout = set(readout_names(network))
    out: Params = {}
    for name in names:
        w = params[name]
        out[_INIT + name] = w.detach().clone()
        rule = init_rule(network, name, own[name])
        if name in readout or isinstance(rule, float):  # the readout; a constant start
            out[_DIRECTION + name] = torch.zeros_like(w)
            continue
        std = (3.0 * rule) ** -0.5  # the variance of uniform(-1/sqrt(m), 1/sqrt(m))
        out[_DIRECTION + name] = std * torch.randn(w.shape, generator=gen, device=w.device,
                                                   dtype=w.dtype)
    n_out = n_outputs if n_outputs is not None else params[names[-1]].shape[1]
    last = params[names[-1]]
    mask = last.new_ones(last.shape[0], n_out)
    if n_function_outputs is not None:
        mask[:, n_function_outputs:] = 0
    out[_MASK] = mask
    return out


def split(params: Params) -> tuple[Params, Params]:
    """``(own, random_function)``: the trainable entries and the reserved ones."""
    own = {k: v for k, v in params.items() if not k.startswith(PREFIX)}
    return own, {k: v for k, v in params.items() if k.startswith(PREFIX)}


def offset(forward: Forward, params: Params, X: Tensor) -> Tensor | None:
    """``g(X) = J(X; w_0) w*`` per member, ``(C, n, n_out)``; None without the term.

    One forward-mode pass (:mod:`torch.autograd.forward_ad`) of the batched ``forward`` at
    ``w_0`` in the direction ``w*`` (``X`` shared ``(n, d)`` or per member ``(C, n, d)``).
    Not differentiated: the term is a constant of training.
    """
    if _MASK not in params:
        return None
    w0 = {k[len(_INIT):]: v.detach() for k, v in params.items() if k.startswith(_INIT)}
    tangent = {k: params[_DIRECTION + k].detach() for k in w0}
    X = X.detach()
    with forward_ad.dual_level():
        dual = {k: forward_ad.make_dual(v, tangent[k]) for k, v in w0.items()}
        g = forward_ad.unpack_dual(forward(dual, X)).tangent
    return g * params[_MASK].detach().unsqueeze(1).to(g.dtype)


def randomized(forward: Forward) -> Forward:
    """``forward`` of ``f~ = f + g``: the plain ``forward`` when ``params`` hold no term.

    Examples
    --------
    >>> from skfbnn.nn.mlp import build_mlp
    >>> from skfbnn.nn.functional import init_params, make_forward
    >>> net = build_mlp(1, 1, (3,), "tanh")
    >>> gen = torch.Generator().manual_seed(0)
    >>> w0 = init_params(net, 2, gen, device=torch.device("cpu"), dtype=torch.float64)
    >>> X = torch.linspace(-1, 1, 4, dtype=torch.float64)[:, None]
    >>> f, f_tilde = make_forward(net), randomized(make_forward(net))
    >>> bool(torch.equal(f_tilde(w0, X), f(w0, X)))
    True
    >>> p = {**w0, **draw(net, w0, gen)}
    >>> torch.allclose(f_tilde(p, X), f(w0, X) + offset(f, p, X))
    True
    """

    def forward_tilde(params: Params, X: Tensor) -> Tensor:
        g = offset(forward, params, X)
        out = forward(params, X)
        return out if g is None else out + g.to(out.dtype)

    forward_tilde.base = forward  # type: ignore[attr-defined]
    return forward_tilde
