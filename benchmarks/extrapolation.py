"""The 1-D extrapolation example on six draws of its 20 points, every model at its defaults.

The example of Wu, Xuan & Lu (2025, section 5.1): twenty noisy observations (noise std 0.5) of
``sin(3 pi x) + 0.3 cos(9 pi x) + 0.5 sin(7 pi x)`` on [-0.75, -0.25] and [0.25, 0.75]
(``skfbnn.datasets.make_oscillation``), drawn again for each data seed. Every regressor is
fitted at its estimator defaults (``random_state=0``), beside scikit-learn's exact GP
(``ConstantKernel() * RBF() + WhiteKernel()``, ``normalize_y=True``, the best marginal
likelihood over three noise starts with two restarts each). Per model and draw one line: the
fit time, the RMSE of the predictive mean to the true function in the data region
(0.25 <= |x| <= 0.75), the mean epistemic std in the data region, in the gap (|x| < 0.25) and
outside (|x| > 0.75), and the ratios gap / data and outside / data.

The criterion the page counts: RMSE < 0.6 in the data region and both ratios at least 1.5.
``--summary FILE`` reads such lines back and prints one row per model over the draws: the
RMSE's mean (range), the draws with RMSE < 0.6, both ratios' mean (range) and the draws that
meet the criterion.

Usage:
    python benchmarks/extrapolation.py > benchmarks/results/extrapolation/draws.txt
    python benchmarks/extrapolation.py --models "exact GP" fSGHMC --draws 0 1
    python benchmarks/extrapolation.py --summary benchmarks/results/extrapolation/draws.txt
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

# The exact GP is the figure script's (examples/plot_extrapolation.py), so the two agree.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from plot_extrapolation import ExactGP  # noqa: E402

MAX_RMSE, MIN_RATIO = 0.6, 1.5


def models() -> dict:
    """Every model of the page's table, at its defaults."""
    import skfbnn

    names = {"fSGHMC": "FunctionalSGHMCRegressor", "fSGLD": "FunctionalSGLDRegressor",
             "SGHMC": "SGHMCRegressor", "SGLD": "SGLDRegressor", "pCNL": "PCNLRegressor",
             "BBB": "BBBRegressor", "fBNN": "FBNNRegressor", "ifBNN": "IFBNNRegressor",
             "Deep ensemble": "DeepEnsembleRegressor", "ifBDE": "IFBDERegressor"}
    out = {"exact GP": lambda: ExactGP()}
    for label, cls in names.items():
        out[label] = lambda cls=cls: getattr(skfbnn, cls)(random_state=0)
    return out


def line(name: str, model, data_seed: int) -> str:
    """Fit ``model`` on draw ``data_seed`` of the 20 points and describe its band."""
    from skfbnn.datasets import make_oscillation, oscillation_function

    X, y = make_oscillation(20, noise_std=0.5, random_state=data_seed)
    x = np.linspace(-1, 1, 400)
    data = (np.abs(x) >= 0.25) & (np.abs(x) <= 0.75)
    gap, outside = np.abs(x) < 0.25, np.abs(x) > 0.75
    start = time.perf_counter()
    model.fit(X, y)
    mean = model.predict(x[:, None])
    std = model.predict_std(x[:, None], kind="epistemic")
    seconds = time.perf_counter() - start
    rmse = float(np.sqrt(np.mean((mean[data] - oscillation_function(x[data])) ** 2)))
    d, g, o = std[data].mean(), std[gap].mean(), std[outside].mean()
    r_hat = model.diagnostics_.get("max_r_hat")
    return (f"data seed {data_seed}: {name}: {seconds:.1f} s, RMSE to truth in the data region "
            f"{rmse:.2f}, epistemic std data {d:.2f} gap {g:.2f} outside {o:.2f} (ratios "
            f"{g / d:.2f}, {o / d:.2f})" + ("" if r_hat is None else f", max R-hat {r_hat:.2f}"))


LINE = re.compile(r"data seed (\d+): (.+?): .*RMSE to truth in the data region ([\d.]+), .*"
                  r"\(ratios ([\d.]+), ([\d.]+)\)")


def summary(path: str) -> str:
    """One markdown row per model of the lines in ``path``."""
    rows = defaultdict(dict)
    with open(path) as fh:
        for text in fh:
            match = LINE.match(text.strip())
            if match:
                seed, name, *values = match.groups()
                rows[name][int(seed)] = tuple(float(v) for v in values)
    out = ["| model (defaults) | draws | RMSE, data region: mean (range) | RMSE < 0.6 | "
           "gap / data: mean (range) | outside / data: mean (range) "
           "| draws meeting the criterion |",
           "|---|---|---|---|---|---|---|"]

    def cell(v):
        return f"{np.mean(v):.2f} ({np.min(v):.2f}-{np.max(v):.2f})"

    for name, draws in rows.items():
        rmse, gap, out_ = (np.array([d[i] for d in draws.values()]) for i in range(3))
        meets = int(np.sum((rmse < MAX_RMSE) & (gap >= MIN_RATIO) & (out_ >= MIN_RATIO)))
        out.append(f"| {name} | {len(draws)} | {cell(rmse)} | {int(np.sum(rmse < MAX_RMSE))} | "
                   f"{cell(gap)} | {cell(out_)} | {meets} of {len(draws)} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=None, help="default: every model")
    parser.add_argument("--draws", nargs="+", type=int, default=list(range(6)))
    parser.add_argument("--summary", metavar="FILE", help="summarise the lines of FILE")
    args = parser.parse_args()
    if args.summary:
        print(summary(args.summary))
        return
    available = models()
    chosen = args.models or list(available)
    unknown = sorted(set(chosen) - set(available))
    if unknown:
        raise SystemExit(f"--models: unknown {unknown}; choose from {list(available)}")
    print(f"# python benchmarks/extrapolation.py --models {' '.join(map(repr, chosen))} "
          f"--draws {' '.join(map(str, args.draws))}")
    for name in chosen:
        for seed in args.draws:
            print(line(name, available[name](), seed), flush=True)


if __name__ == "__main__":
    main()
