"""fBNN's step on its own network by the number of function draws, beside BBB's on that network.

Slopes as in ``bench_functional_vi.py`` (``n_iter`` 300 and 600 on the training rows of
Boston split 0, one-off costs cancel), three repeats, medians: fBNN at its defaults (32
draws), with ``n_particles=16``, and BBB on two GELU layers of 50. A lever for issue 7's cost
goal, not a validated default (fewer draws also weaken SSGE's entropy gradient,
``benchmarks/ssge_entropy_scale.py``).

Usage: python benchmarks/bench_fbnn_particles.py [--data-home ../shared/data/uci]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_functional_vi import boston
from bench_sgmcmc import fit_seconds

from skfbnn import BBBRegressor, FBNNRegressor

CONFIGS = {
    "fBNN, 32 draws (defaults)": (FBNNRegressor, {}),
    "fBNN, 16 draws": (FBNNRegressor, {"n_particles": 16}),
    "BBB on two GELU layers of 50": (BBBRegressor, {"hidden_layer_sizes": (50, 50),
                                                    "activation": "gelu"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = boston(args.data_home)

    def seconds(cls, kwargs, n_iter):
        est = cls(n_iter=n_iter, min_epochs=0, random_state=0, device="cpu", **kwargs)
        return fit_seconds(est, X, y)

    for cls, kwargs in CONFIGS.values():  # warm-up
        seconds(cls, kwargs, 20)
    slopes = {name: [] for name in CONFIGS}
    for _ in range(args.repeats):
        for name, (cls, kwargs) in CONFIGS.items():
            slopes[name].append((seconds(cls, kwargs, 600) - seconds(cls, kwargs, 300)) / 300)
    base = np.median(slopes["BBB on two GELU layers of 50"])
    for name, values in slopes.items():
        print(f"{name}: {1e3 * np.median(values):.2f} ms / iteration "
              f"({', '.join(f'{1e3 * v:.2f}' for v in values)}), "
              f"ratio to BBB on the same network {np.median(values) / base:.2f}")


if __name__ == "__main__":
    main()
