"""The tanh activation: PyTorch's kernel against the logistic form ``2 sigmoid(2x) - 1``.

``skfbnn.nn.mlp.Tanh`` computes tanh by the logistic form. This script measures why, side by
side in one run: forward, and forward plus backward, of the activation alone on a hidden
layer of the default network (50 units) over a minibatch of 256 rows plus 100 measurement
points, for one and eight chains, in float32 (the estimators' default) and float64. It
prints the median over ``--repeats`` timings of each, in microseconds, and the ratio
``torch.tanh / logistic form``.

``--layer`` instead times forward and backward of the default 13-50-1 network (gradients of
every parameter, float32) with its hidden layer as ``Tanh()`` after ``baddbmm`` (autograd),
as the fused node ``skfbnn.nn.fused.linear_tanh`` before the readout's ``baddbmm``, and with
hidden layer and readout as the one node ``skfbnn.nn.fused.tanh_readout``, for several
numbers of parameter sets and rows, and prints the layer's output size (sets x 50 x rows),
the three times and the savings of the nodes: what
``skfbnn.nn.functional.FUSE_MIN_ELEMENTS`` is set from.

Usage: python benchmarks/bench_tanh.py [--repeats 7] [--threads 1] [--layer]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from skfbnn.nn.fused import linear_tanh, tanh_readout
from skfbnn.nn.mlp import Tanh


def microseconds(fn, repeats: int, inner: int = 200) -> float:
    """Median over ``repeats`` of the mean wall time of ``inner`` calls of ``fn``."""
    for _ in range(20):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner * 1e6)
    return float(np.median(times))


def forward_backward(act, x: torch.Tensor, grad: torch.Tensor):
    leaf = x.clone().requires_grad_(True)
    return lambda: torch.autograd.grad(act(leaf), leaf, grad)


def network_step(mode: str, sets: int, rows: int, gen: torch.Generator):
    """Forward and backward of the 13-50-1 tanh network in the features-by-rows layout;
    ``mode`` is ``"autograd"``, ``"linear_tanh"`` or ``"tanh_readout"``."""
    X = torch.randn(sets, rows, 13, generator=gen)
    params = [torch.randn(sets, 50, 13, generator=gen), torch.randn(sets, 50, generator=gen),
              torch.randn(sets, 1, 50, generator=gen), torch.randn(sets, 1, generator=gen)]
    params = [p.requires_grad_(True) for p in params]
    grad = torch.randn(sets, rows, 1, generator=gen)
    act = Tanh()

    def step():
        w1, b1, w2, b2 = params
        if mode == "tanh_readout":
            out = tanh_readout(b1, w1, X.mT, b2, w2).mT
        else:
            h = linear_tanh(b1, w1, X.mT) if mode == "linear_tanh" else \
                act(torch.baddbmm(b1.unsqueeze(2), w1, X.mT))
            out = torch.baddbmm(b2.unsqueeze(2), w2, h).mT
        return torch.autograd.grad(out, params, grad)

    return step


def layer(repeats: int) -> None:
    print("sets  rows  elements | Tanh after baddbmm | linear_tanh | tanh_readout | "
          "saved by linear_tanh, tanh_readout (us)")
    gen = torch.Generator().manual_seed(0)
    for sets, rows in ((1, 256), (1, 512), (2, 256), (1, 1024), (4, 256), (8, 256),
                       (8, 356)):
        plain, fused, readout = (microseconds(network_step(m, sets, rows, gen), repeats)
                                 for m in ("autograd", "linear_tanh", "tanh_readout"))
        print(f"{sets:4d} {rows:5d} {sets * 50 * rows:9d} | {plain:18.1f} | {fused:11.1f} | "
              f"{readout:12.1f} | {plain - fused:+.1f}, {plain - readout:+.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--layer", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{args.threads} thread(s), repeats={args.repeats}")
    if args.layer:
        layer(args.repeats)
        return
    print("dtype    chains | torch.tanh fwd  fwd+bwd | logistic fwd  fwd+bwd | ratio fwd  fwd+bwd")
    gen = torch.Generator().manual_seed(0)
    for dtype in (torch.float32, torch.float64):
        for chains in (1, 8):
            x = 2 * torch.randn(chains, 50, 356, generator=gen, dtype=dtype)
            grad = torch.randn(x.shape, generator=gen, dtype=dtype)
            row = []
            for act in (torch.tanh, Tanh()):
                row += [microseconds(lambda a=act, x=x: a(x), args.repeats),
                        microseconds(forward_backward(act, x, grad), args.repeats)]
            print(f"{str(dtype)[6:]:8s} {chains:6d} | {row[0]:14.1f} {row[1]:8.1f} | "
                  f"{row[2]:12.1f} {row[3]:8.1f} | {row[0] / row[2]:9.2f} {row[1] / row[3]:8.2f}")


if __name__ == "__main__":
    main()
