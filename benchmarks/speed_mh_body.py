"""Seconds per pCNL step: a small Conv1d body against the MLP of the same readout width.

The three networks are measured side by side in one run, in interleaved rounds (the median
of the rounds is reported, so a load that comes and goes hits all three alike), kernel steps
only, as the family computes them (float64 chain, float32 features, one thread)::

    python benchmarks/speed.py mh-body                      # 256 rows, 4 chains
    python benchmarks/speed.py mh-body --rows 1024 --chains 8

* ``mlp``: 40 -> 64 -> 64 -> 1, GELU, the MLP's batched path (:class:`NTKLayout`);
* ``mlp (generic)``: the same network with its activations wrapped in a module, so that it
  goes through ``functional_call`` + ``vmap`` (:class:`BodyLayout`): the cost of the path;
* ``cnn``: ``Conv1d(1, 16, 5, stride=2)``, GELU, ``Conv1d(16, 8, 3, stride=2)``, GELU,
  ``Flatten`` (8 channels x 8 positions = 64 features), ``Linear(64, 1)``: the cost of the
  architecture on the same path.
"""

from __future__ import annotations

import statistics
import time

import torch
from torch import nn

from skfbnn.inference.mh import pcnl
from skfbnn.inference.mh.build import prior_draws
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import make_forward

LENGTH = 40


class Wrapped(nn.Module):
    def __init__(self, act: nn.Module) -> None:
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)


def networks() -> dict[str, nn.Sequential]:
    with torch.device("meta"):
        mlp = nn.Sequential(nn.Linear(LENGTH, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(),
                            nn.Linear(64, 1))
        cnn = nn.Sequential(nn.Unflatten(1, (1, LENGTH)), nn.Conv1d(1, 16, 5, stride=2),
                            nn.GELU(), nn.Conv1d(16, 8, 3, stride=2), nn.GELU(), nn.Flatten(),
                            nn.Linear(64, 1))
    wrapped = nn.Sequential(*(m if isinstance(m, nn.Linear) else Wrapped(m) for m in mlp))
    return {"mlp": mlp, "mlp (generic)": wrapped, "cnn": cnn}


def activations_per_row(net: nn.Sequential) -> int:
    """Outputs of the body's layers per row (reshapes not counted), from shapes alone."""
    x, total = torch.zeros(1, LENGTH, device="meta"), 0
    for layer in list(net)[:-1]:
        x = layer(x)
        if not isinstance(layer, (nn.Flatten, nn.Unflatten)):
            total += x.numel()
    return total


def chain(net: nn.Sequential, X, y, n_chains: int):
    """A pCNL state at prior draws and its update."""
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.3]), None, len(X),
                           network=net)
    gen = torch.Generator().manual_seed(0)
    batch = {"x": X, "y": y}
    ntk = dict(sigma_w=2**0.5, sigma_b=0.1, sigma_w_out=1.0, sigma_b_out=0.1,
               reparametrize=True, marginalize_readout=False)
    # keys, shapes and dtype only: the chains start at prior draws
    params = {name: torch.zeros(n_chains, *p.shape, dtype=torch.float64)
              for name, p in net.named_parameters()}
    params = prior_draws(problem, batch, params, gen, **ntk)
    transform = pcnl.build(problem, step_size=0.05, **ntk)
    state = transform.init(params, batch, gen)
    return [state], transform, batch, gen


def add_arguments(parser) -> None:
    """The ``mh-body`` subcommand's options."""
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20, help="steps per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)


def run(args) -> None:
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(args.rows, LENGTH, generator=gen, dtype=torch.float64)
    y = X[:, :5].sum(1, keepdim=True).sin()
    nets = networks()
    runs = {name: chain(net, X, y, args.chains) for name, net in nets.items()}
    activations = {name: activations_per_row(net) for name, net in nets.items()}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds + 1):  # the first round warms up
        for name, (box, transform, batch, g) in runs.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                box[0], _ = transform.update(box[0], batch, g)
            times[name].append((time.perf_counter() - start) / args.steps)
    print(f"pCNL, {args.rows} rows x {LENGTH} inputs, {args.chains} chains, "
          f"torch threads={torch.get_num_threads()}, median of {args.rounds} rounds of "
          f"{args.steps} steps")
    print("| network | sampled body entries | body activations per row | ms per step | vs mlp |")
    print("|---|---|---|---|---|")
    base = statistics.median(times["mlp"][1:])
    for name, (box, *_) in runs.items():
        t = statistics.median(times[name][1:])
        print(f"| {name} | {box[0].target.layout.n_hidden} | {activations[name]} | "
              f"{1e3 * t:.2f} | {t / base:.2f}x |")
