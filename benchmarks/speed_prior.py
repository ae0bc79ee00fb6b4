"""``speed.py prior-grad``: the log posterior's gradient with the weight prior's gradient in
closed form, against autograd of the whole.

A sampler step's gradient (``skfbnn.inference.objective.grad_and_value``) of the
Boston-sized problem's network (13-50-1 tanh, float32, 256 rows per chain), with each
weight prior the SG-MCMC methods use: the learned one (``prior_std="learn"``, their
default, with the learned noise) and a fixed isotropic one (``prior_std=1.0``, a fixed
noise). ``closed`` is what the samplers run (the likelihood by autograd, the prior's
``-lambda w`` in closed form); ``autograd`` differentiates the whole log posterior, prior
included, as before. Both give the same numbers (``tests/inference/test_objective.py``).
The two take turns in ``--blocks`` blocks of ``--calls`` calls; the table gives the median
µs per call and the median of the paired ratios.
"""

from __future__ import annotations

import time

import numpy as np

PRIORS = ("learn", "isotropic")


def add_arguments(p) -> None:
    p.add_argument("--chains", type=int, nargs="+", default=[1, 8])
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--calls", type=int, default=300)


def gradient_calls(chains: int, prior: str):
    """``{"autograd": f, "closed": f}``: the two ways of one gradient evaluation."""
    import torch

    from skfbnn.inference.objective import _autograd_grad_and_value, make_log_posterior
    from skfbnn.inference.types import BayesProblem
    from skfbnn.likelihoods import GaussianLikelihood
    from skfbnn.nn.functional import init_params, make_forward
    from skfbnn.nn.mlp import build_mlp
    from skfbnn.priors.weight import HierarchicalWeightPrior, WeightPrior

    cpu, gen = torch.device("cpu"), torch.Generator().manual_seed(0)
    likelihood = GaussianLikelihood() if prior == "learn" else GaussianLikelihood([0.5])
    net = build_mlp(13, 1, (50,), "tanh")
    params = init_params(net, chains, gen, device=cpu, dtype=torch.float32)
    params.update(likelihood.init_params(chains, 1, cpu, torch.float32))
    weight_prior = HierarchicalWeightPrior() if prior == "learn" else WeightPrior(1.0)
    log_posterior = make_log_posterior(BayesProblem(make_forward(net), likelihood,
                                                    weight_prior, 455))
    batch = {"x": torch.randn(chains, 256, 13, generator=gen),
             "y": torch.randn(chains, 256, 1, generator=gen)}
    return {"autograd": lambda: _autograd_grad_and_value(log_posterior, params, batch),
            "closed": lambda: log_posterior.grad_and_value(params, batch)}


def run(args) -> None:
    import torch

    torch.set_num_threads(1)
    print(f"µs per gradient, 13-50-1 tanh, 256 rows per chain, one thread, median of "
          f"{args.blocks} blocks of {args.calls} calls\n")
    print("| prior | chains | autograd of the whole | closed-form prior | autograd / closed |\n"
          "|---|---|---|---|---|")
    for prior in PRIORS:
        for chains in args.chains:
            calls = gradient_calls(chains, prior)
            times: dict[str, list[float]] = {name: [] for name in calls}
            for block in range(args.blocks):
                order = list(calls) if block % 2 == 0 else list(calls)[::-1]
                for name in order:
                    for _ in range(max(1, args.calls // 10)):  # warm
                        calls[name]()
                    start = time.perf_counter()
                    for _ in range(args.calls):
                        calls[name]()
                    times[name].append((time.perf_counter() - start) / args.calls * 1e6)
            ratio = np.median(np.array(times["autograd"]) / np.array(times["closed"]))
            print(f"| {prior} | {chains} | {np.median(times['autograd']):.0f} | "
                  f"{np.median(times['closed']):.0f} | {ratio:.2f} |")
