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

from bench_functional_vi import boston
from bench_sgmcmc import report_slopes, slope

from skfbnn import BBBRegressor, FBNNRegressor

CONFIGS = {
    "fBNN, 32 draws (defaults)": (FBNNRegressor, {}),
    "fBNN, 16 draws": (FBNNRegressor, {"n_particles": 16}),
    "BBB on fBNN's network": (BBBRegressor, {"hidden_layer_sizes": (50, 50),
                                             "activation": "gelu"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = boston(args.data_home)
    for cls, kwargs in CONFIGS.values():  # warm-up
        slope(cls, X, y, 10, 0, **kwargs)
    rows: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for _ in range(args.repeats):
        for name, (cls, kwargs) in CONFIGS.items():
            rows[name].append(slope(cls, X, y, 300, 0, **kwargs))
    report_slopes(rows, "BBB on fBNN's network")


if __name__ == "__main__":
    main()
