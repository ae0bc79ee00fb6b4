"""Throughput of the wide-network samplers: pCN versus MALA, and the dual versus primal readout.

One process, one data set, so the ratios compare like with like: ``--n`` standardised rows of
a UCI data set, one hidden GELU layer of ``--width`` units, fixed noise std 0.1, the
reparametrised posterior, ``--chains`` chains stepped by the kernels directly (no
estimator overhead). Reports kernel steps per second (every chain moves once per step) of
pCN and MALA (which also needs the gradient), and of pCN with the ``n x n`` dual
factorisation versus the ``(h+1) x (h+1)`` primal one when ``n < h + 1``; and the time of one
potential evaluation of each form.

Usage: python benchmarks/mh_throughput.py --width 1024 --n 256
"""

from __future__ import annotations

import argparse
import time

import torch

from skfbnn.datasets import load_uci
from skfbnn.inference.mh import mala, pcn
from skfbnn.inference.mh.build import prior_draws
from skfbnn.inference.mh.reparam import marginal_potential
from skfbnn.inference.types import BayesProblem
from skfbnn.likelihoods import GaussianLikelihood
from skfbnn.nn.functional import init_params, make_forward
from skfbnn.nn.mlp import build_mlp


def _setup(args):
    X, y = load_uci(args.dataset, data_home=args.data_home, return_X_y=True)
    X, y = X[: args.n], y[: args.n]
    X = torch.tensor((X - X.mean(0)) / X.std(0))
    y = torch.tensor(((y - y.mean()) / y.std())[:, None])
    net = build_mlp(X.shape[1], 1, (args.width,), "gelu")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.1]), None, len(X),
                           network=net)
    return X, y, net, problem


def steps_per_second(module, problem, X, y, net, args, **kwargs) -> float:
    gen = torch.Generator().manual_seed(0)
    batch = {"x": X, "y": y}
    params = init_params(net, args.chains, gen, device=torch.device("cpu"),
                         dtype=torch.float64)
    ntk = dict(sigma_w=2**0.5, sigma_b=0.1, sigma_w_out=1.0, sigma_b_out=0.1,
               reparametrize=True, marginalize_readout=False)
    params = prior_draws(problem, batch, params, gen, **ntk)
    transform = module.build(problem, step_size=0.01, **kwargs)
    state = transform.init(params, batch, gen)
    for _ in range(3):  # warm-up
        state, _ = transform.update(state, batch, gen)
    start = time.perf_counter()
    for _ in range(args.n_steps):
        state, _ = transform.update(state, batch, gen)
    return args.n_steps / (time.perf_counter() - start)


def potential_seconds(X, y, net, args, dual: bool) -> float:
    from skfbnn.inference.mh.ntk import NTKLayout

    layout = NTKLayout.from_network(net)
    gen = torch.Generator().manual_seed(1)
    hidden = torch.randn(args.chains, layout.n_hidden, generator=gen, dtype=torch.float64)
    Psi = layout.features(hidden, X)
    lam = torch.tensor([0.01], dtype=torch.float64)
    marginal_potential(Psi, y, lam, dual)
    start = time.perf_counter()
    for _ in range(args.n_steps):
        marginal_potential(Psi, y, lam, dual)
    return (time.perf_counter() - start) / args.n_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="kin8nm")
    parser.add_argument("--data-home", default="../shared/data/uci")
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--n-steps", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (fits use 1, see skfbnn.device.cpu_threads)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    X, y, net, problem = _setup(args)
    print(f"n={args.n}, width={args.width}, p={args.width + 1}, chains={args.chains}, "
          f"torch threads={torch.get_num_threads()}")
    rates = {
        "pcn (auto: dual)" if args.n < args.width + 1 else "pcn (auto: primal)":
            steps_per_second(pcn, problem, X, y, net, args),
        "mala (auto)": steps_per_second(mala, problem, X, y, net, args),
        "pcn (dual forced)": steps_per_second(pcn, problem, X, y, net, args, dual=True),
        "pcn (primal forced)": steps_per_second(pcn, problem, X, y, net, args, dual=False),
    }
    print("| sampler | steps/s | chain-samples/s |")
    print("|---|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.1f} | {rate * args.chains:.1f} |")
    names = list(rates)
    print(f"pCN / MALA throughput: {rates[names[0]] / rates[names[1]]:.2f}x")
    print(f"pCN dual / primal throughput: "
          f"{rates['pcn (dual forced)'] / rates['pcn (primal forced)']:.2f}x")
    dual, primal = (potential_seconds(X, y, net, args, d) for d in (True, False))
    print(f"potential only: dual {1e3 * dual:.2f} ms, primal {1e3 * primal:.2f} ms, "
          f"speed-up {primal / dual:.2f}x")


if __name__ == "__main__":
    main()
