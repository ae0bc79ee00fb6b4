"""Evaluate a module with batched parameter dictionaries (chains, draws, members).

Parameters are ``dict[str, Tensor]`` whose tensors carry one leading batch
dimension (chains during sampling, stored draws at prediction time).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.func import functional_call, vmap

from .batched_mlp import batched_mlp_forward, is_plain_mlp
from .sequential import plan_sequential, run_plan

__all__ = ["Params", "init_params", "init_rule", "fan_in", "NORM_LAYERS", "make_forward",
           "values_per_row", "forward_values", "ModuleForward", "SequentialForward",
           "readout_names",
           "n_batch", "index_params"]

Params = dict[str, Tensor]


def init_params(
    module: nn.Module,
    n_batch: int,
    gen: torch.Generator,
    *,
    device: torch.device,
    dtype: torch.dtype,
) -> Params:
    """Draw ``n_batch`` independent initial parameter sets.

    Every parameter with fan-in ``m`` is uniform on ``[-1/sqrt(m), 1/sqrt(m)]`` (PyTorch's
    default ``Linear`` scale), drawn from ``gen``; the fan-in comes from
    :func:`torch.nn.init._calculate_fan_in_and_fan_out` of the parameter, or for a
    one-dimensional ``bias`` from that of the weight of the module that owns it. The
    scale and shift of a normalisation layer (``LayerNorm``, ``GroupNorm``,
    ``InstanceNorm``, ``RMSNorm``) start at 1 and 0, as PyTorch starts them
    (:func:`init_rule`). The module's own values are never read.

    Raises
    ------
    ValueError
        For a parameter no rule covers (naming it).

    Examples
    --------
    >>> conv = nn.Sequential(nn.Conv1d(1, 4, 5), nn.GroupNorm(2, 4))
    >>> p = init_params(conv, 3, torch.Generator().manual_seed(0),
    ...                 device=torch.device("cpu"), dtype=torch.float64)
    >>> p["0.weight"].shape, bool(p["0.weight"].abs().max() <= 5 ** -0.5)
    (torch.Size([3, 4, 1, 5]), True)
    >>> p["1.weight"][0].tolist(), p["1.bias"][0].tolist()
    ([1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0])
    """
    params: Params = {}
    for name, p in module.named_parameters():
        rule = init_rule(module, name, p)
        if isinstance(rule, float):  # a normalisation layer's constant
            params[name] = torch.full((n_batch, *p.shape), rule, device=device, dtype=dtype)
            continue
        bound = rule**-0.5
        u = torch.rand((n_batch, *p.shape), generator=gen, device=device, dtype=dtype)
        params[name] = (2.0 * u - 1.0) * bound
    return params


NORM_LAYERS: tuple[type[nn.Module], ...] = (
    nn.LayerNorm, nn.GroupNorm, nn.modules.instancenorm._InstanceNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)
"""Normalisation layers whose affine scale and shift start at 1 and 0 (per row, so they
couple neither rows nor chains, unlike batch normalisation)."""


def fan_in(p: Tensor) -> int:
    """The fan-in of a weight of two or more dimensions, by
    :func:`torch.nn.init._calculate_fan_in_and_fan_out` (``in * prod(kernel)``).

    Examples
    --------
    >>> fan_in(nn.Conv2d(3, 8, 3).weight), fan_in(nn.Linear(5, 2).weight)
    (27, 5)
    """
    if p.numel() == 0:  # a layer without outputs: the same rule, by the shape
        return int(p.shape[1] * math.prod(p.shape[2:]))
    return int(torch.nn.init._calculate_fan_in_and_fan_out(p)[0])


def init_rule(module: nn.Module, name: str, p: Tensor) -> int | float:
    """How parameter ``name`` of ``module`` starts: its fan-in (an ``int``: uniform on
    ``+-1/sqrt(fan_in)``) or a constant (a ``float``: a normalisation layer's 1 or 0).

    A weight of two or more dimensions has its own fan-in; a one-dimensional ``bias``
    takes that of the weight of the module owning it. Anything else is refused.

    Examples
    --------
    >>> net = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    >>> [init_rule(net, n, p) for n, p in net.named_parameters()]
    [3, 3, 1.0, 0.0]
    """
    owner_name, _, leaf = name.rpartition(".")
    owner = module.get_submodule(owner_name)
    if isinstance(owner, NORM_LAYERS) and leaf in ("weight", "bias"):
        return 1.0 if leaf == "weight" else 0.0
    if p.dim() >= 2:
        return fan_in(p)
    weight = owner._parameters.get("weight")
    if leaf == "bias" and p.dim() == 1 and weight is not None and weight.dim() >= 2:
        return fan_in(weight)
    raise ValueError(
        f"network parameter {name!r} (shape {tuple(p.shape)}, in a "
        f"{type(owner).__name__}) has no initialisation rule: the initial weights are "
        "drawn with the fan-in of a weight of two or more dimensions, and a bias takes the "
        "fan-in of its module's weight; normalisation layers start at 1 and 0. Register a "
        "fixed tensor as a buffer (module.register_buffer), or make the parameter a "
        "weight or the bias of a module with a weight.")


def make_forward(module: nn.Module, input_shape: tuple[int, ...] | None = None
                 ) -> Callable[[Params, Tensor], Tensor]:
    """Return ``forward(params, X) -> (B, n, n_out)`` for ``B`` parameter sets.

    ``X`` holds flat rows: shared by every parameter set, shape ``(n, d)``, or one slice
    per set, shape ``(B, n, d)``. A ``Sequential`` of ``Linear`` layers and element-wise
    activations (with no ``input_shape``) is evaluated with batched matrix products
    (``torch.baddbmm``); a ``Sequential`` of convolutions, ``GroupNorm``, ``Linear`` layers
    and activations by :class:`SequentialForward` (the sets folded into the channel groups,
    :mod:`skfbnn.nn.sequential`); any other module by :class:`ModuleForward`
    (``torch.func.vmap`` over ``torch.func.functional_call``). Each reshapes a row to
    ``input_shape``. All give the same numbers up to the order of floating-point sums; the
    batched MLP path is about 2x faster per sampler step than ``vmap`` on small networks.
    """
    if input_shape is None and is_plain_mlp(module):
        return batched_mlp_forward(module)
    plan = plan_sequential(module)
    if plan is not None:
        return SequentialForward(module, input_shape, plan)
    return ModuleForward(module, input_shape)


def values_per_row(module: nn.Module, input_shape: tuple[int, ...] | None, n_features: int
                   ) -> int | None:
    """Values one row makes through ``module``: the outputs of its layers, summed.

    For the block sizes at prediction (:func:`skfbnn.posterior.block_rows`): counted by
    hooks on every leaf module of a float32 copy in one forward pass of a zero row (no
    gradients; the module itself is untouched), shaped
    ``input_shape``, else a flat row of ``n_features``. None for a plain MLP on flat rows,
    whose weights give the count.

    Examples
    --------
    >>> net = nn.Sequential(nn.Conv1d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(32, 2))
    >>> values_per_row(net, (1, 10), 10)   # 4 x 8 twice, 32 flattened, 2 outputs
    98
    """
    if input_shape is None and is_plain_mlp(module):
        return None
    return forward_values(module, input_shape, n_features)


def forward_values(module: nn.Module, input_shape: tuple[int, ...] | None, n_features: int
                   ) -> int:
    """The count of :func:`values_per_row` for any module, a plain MLP's included (counted
    from its layers' widths, without a forward pass).

    Examples
    --------
    >>> net = nn.Sequential(nn.Linear(13, 50), nn.Tanh(), nn.Linear(50, 1))
    >>> forward_values(net, None, 13)   # 50 twice, 1 output
    101
    """
    if input_shape is None and is_plain_mlp(module):
        widths, width = 0, n_features
        for layer in module:  # an element-wise activation keeps the width
            width = layer.out_features if isinstance(layer, nn.Linear) else width
            widths += width
        return max(1, widths)
    probe = copy.deepcopy(module).float()  # one dtype, as the forward casts parameters and
    # buffers to the rows' dtype (a float64 buffer beside float32 weights runs)
    leaves = [m for m in probe.modules() if next(m.children(), None) is None] or [probe]
    counts: list[int] = []

    def count(_module: nn.Module, _inputs: object, output: object) -> None:
        if torch.is_tensor(output):
            counts.append(output.numel())

    first = next(probe.parameters(), None)
    x = torch.zeros(1, *(input_shape or (n_features,)),
                    device=None if first is None else first.device, dtype=torch.float32)
    for leaf in leaves:
        leaf.register_forward_hook(count)
    with torch.no_grad():
        probe(x)
    return max(1, sum(counts))


class ModuleForward:
    """Any module evaluated with batched parameter dictionaries.

    ``forward(params, X)`` gives the module only its own parameters (by name; every other
    entry of ``params``, such as a learned noise or an ensemble's anchors, stays outside
    the module's namespace) and its own buffers, cast to the dtype and device of ``X``.
    Whether ``X`` is shared by the sets or one slice per set is part of the calling
    contract, not inferred from the rows' shape: the inference layer passes flat rows,
    ``(n, d)`` shared (``vmap`` over the sets alone) or ``(B, n, d)`` the sets' own (``vmap``
    over both, ``B`` checked against the sets); each row is reshaped to ``input_shape`` only
    inside the module's call, so an image's channels are never taken for parameter sets.

    Parameters
    ----------
    module : torch.nn.Module
        The architecture; its parameters' values are never used.
    input_shape : tuple of int, optional
        The shape the module takes each row in (e.g. ``(1, 40)``); None: flat rows.

    Examples
    --------
    >>> net = nn.Sequential(nn.Conv1d(1, 2, 3), nn.Flatten(), nn.Linear(8, 1))
    >>> forward = ModuleForward(net, (1, 6))
    >>> p = init_params(net, 5, torch.Generator().manual_seed(0),
    ...                 device=torch.device("cpu"), dtype=torch.float64)
    >>> forward(p, torch.zeros(7, 6, dtype=torch.float64)).shape
    torch.Size([5, 7, 1])
    >>> forward(p, torch.zeros(5, 7, 6, dtype=torch.float64)).shape
    torch.Size([5, 7, 1])
    """

    def __init__(self, module: nn.Module, input_shape: tuple[int, ...] | None = None) -> None:
        self.module = module
        self.names = tuple(name for name, _ in module.named_parameters())
        self.input_shape = None if input_shape is None else tuple(int(s) for s in input_shape)
        self.n_features = None if input_shape is None else math.prod(self.input_shape)
        self._buffers: dict[tuple, Params] = {}
        self._shared = vmap(self.single, in_dims=(0, None, None))
        self._per_set = vmap(self.single, in_dims=(0, 0, None))

    def buffers(self, device: torch.device, dtype: torch.dtype) -> Params:
        """The module's buffers on ``device``, floating ones in ``dtype`` (cached)."""
        key = (device, dtype)
        if key not in self._buffers:
            self._buffers[key] = {
                name: b.to(device=device, dtype=dtype if b.is_floating_point() else b.dtype)
                for name, b in self.module.named_buffers()}
        return self._buffers[key]

    def single(self, params: Params, x: Tensor, buffers: Params) -> Tensor:
        """One parameter set's outputs ``(n, n_out)`` at flat rows ``x (n, d)``."""
        if self.input_shape is not None:
            x = x.reshape(*x.shape[:-1], *self.input_shape)
        return functional_call(self.module, (params, buffers), (x,))

    def own(self, params: Params) -> Params:
        """The entries of ``params`` that are the module's parameters."""
        return {name: params[name] for name in self.names}

    def __call__(self, params: Params, X: Tensor) -> Tensor:
        own = self.own(params)
        if self.n_features is not None and X.shape[-1] != self.n_features:
            raise ValueError(f"X has rows of {X.shape[-1]} values; input_shape "
                             f"{self.input_shape} needs {self.n_features}.")
        if X.dim() not in (2, 3):
            raise ValueError("forward takes flat rows, (n, d) shared by the parameter sets "
                             f"or (B, n, d) one slice per set. Got X of shape {tuple(X.shape)}.")
        n_sets = next(iter(own.values())).shape[0] if own else X.shape[0]
        if X.dim() == 3 and X.shape[0] != n_sets:
            raise ValueError(f"X of shape {tuple(X.shape)} holds one slice of rows per "
                             f"parameter set, but there are {n_sets} sets.")
        return self._evaluate(own, X, n_sets)

    def _evaluate(self, own: Params, X: Tensor, n_sets: int) -> Tensor:
        """The sets' outputs at checked rows (``vmap`` over ``functional_call``)."""
        buffers = self.buffers(X.device, X.dtype)
        return (self._shared if X.dim() == 2 else self._per_set)(own, X, buffers)


class SequentialForward(ModuleForward):
    """A :class:`ModuleForward` whose batched call runs the sets folded into the channel
    groups of the module's layers (:func:`skfbnn.nn.sequential.run_plan`); one set
    (:meth:`single`, the Jacobians) still goes through ``functional_call``.

    Examples
    --------
    >>> from skfbnn.nn.zoo import CNN1d
    >>> net = CNN1d(12, 2, channels=4)
    >>> forward = make_forward(net, (1, 12))
    >>> type(forward).__name__
    'SequentialForward'
    >>> p = init_params(net, 3, torch.Generator().manual_seed(0),
    ...                 device=torch.device("cpu"), dtype=torch.float64)
    >>> X = torch.randn(5, 12, dtype=torch.float64)
    >>> bool(torch.allclose(forward(p, X), ModuleForward(net, (1, 12))(p, X)))
    True
    """

    def __init__(self, module: nn.Module, input_shape: tuple[int, ...] | None = None,
                 plan: list | None = None) -> None:
        super().__init__(module, input_shape)
        self.plan = plan if plan is not None else plan_sequential(module)
        if self.plan is None:
            raise ValueError(f"{type(module).__name__} is not a Sequential of the layers "
                             "skfbnn.nn.sequential runs batched; use ModuleForward.")

    def _evaluate(self, own: Params, X: Tensor, n_sets: int) -> Tensor:
        return run_plan(self.plan, own, X, n_sets, self.input_shape)


def readout_names(module: nn.Module) -> list[str]:
    """Names of the readout's parameters: those the last submodule owning parameters
    (in registration order) holds itself; for an MLP, the last layer's weight and bias.

    Examples
    --------
    >>> readout_names(nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)))
    ['2.weight', '2.bias']
    """
    last = ""
    for name, sub in module.named_modules():
        if sub._parameters and any(p is not None for p in sub._parameters.values()):
            last = name
    prefix = f"{last}." if last else ""
    return [name for name, _ in module.named_parameters()
            if name.startswith(prefix) and "." not in name[len(prefix):]]


def n_batch(params: Params) -> int:
    """Size of the leading batch dimension."""
    return next(iter(params.values())).shape[0]


def index_params(params: Params, index: Tensor | slice) -> Params:
    """Select along the leading batch dimension."""
    return {k: v[index] for k, v in params.items()}
