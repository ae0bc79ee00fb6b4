"""Time one ``ssge_score`` call at fBNN's shape, optionally against another version of the module.

fBNN calls SSGE once per step on its ``n_particles`` function draws at the measurement set
(32 draws of 20 values at the defaults, float32 in, float64 inside). This times that call
with the installed ``skfbnn.stats.ssge`` and, given ``--against PATH``, with the module at
``PATH`` (e.g. ``skfbnn/stats/ssge.py`` of an older commit checked out in a second worktree),
in interleaved rounds (order reversed every other round) so that load falls on both alike,
and checks that both give the same output bit for bit.

Usage: python benchmarks/bench_ssge.py [--against /path/to/old/skfbnn/stats/ssge.py]
       [--samples 32] [--dim 20] [--rounds 20] [--calls 1000]
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import numpy as np
import torch

from skfbnn.stats import ssge


def load(path: str):
    spec = importlib.util.spec_from_file_location("ssge_against", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def microseconds(module, x: torch.Tensor, calls: int) -> float:
    for _ in range(calls // 20):
        module.ssge_score(x)
    start = time.perf_counter()
    for _ in range(calls):
        module.ssge_score(x)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default=None)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    x = torch.randn(args.samples, args.dim, generator=torch.Generator().manual_seed(0))
    modules = {"installed": ssge}
    if args.against:
        modules["against"] = load(args.against)
        same = torch.equal(ssge.ssge_score(x), modules["against"].ssge_score(x))
        print(f"bit-identical output: {same}")
    times: dict[str, list[float]] = {name: [] for name in modules}
    for r in range(args.rounds):
        for name in list(modules) if r % 2 == 0 else list(modules)[::-1]:
            times[name].append(microseconds(modules[name], x, args.calls))
    print(f"torch {torch.__version__}, 1 thread; samples ({args.samples}, {args.dim}); "
          f"{args.rounds} rounds of {args.calls} calls")
    for name, values in times.items():
        print(f"{name}: {np.median(values):.1f} us per call "
              f"(range {min(values):.1f}-{max(values):.1f})")
    if args.against:
        ratio = np.median(np.array(times["installed"]) / np.array(times["against"]))
        print(f"installed / against, median of per-round ratios: {ratio:.3f}")


if __name__ == "__main__":
    main()
