"""The tanh activation: PyTorch's kernel against the logistic form ``2 sigmoid(2x) - 1``.

``skfbnn.nn.mlp.Tanh`` computes tanh by the logistic form. This script measures why, side by
side in one run: forward, and forward plus backward, of the activation alone on a hidden
layer of the default network (50 units) over a minibatch of 256 rows plus 100 measurement
points, for one and eight chains, in float32 (the estimators' default) and float64. It
prints the median over ``--repeats`` timings of each, in microseconds, and the ratio
``torch.tanh / logistic form``.

Usage: python benchmarks/bench_tanh.py [--repeats 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{args.threads} thread(s), repeats={args.repeats}")
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
