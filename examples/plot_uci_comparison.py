"""
Every method on the UCI regression benchmark
============================================

The benchmark suite fits every method at its defaults on the standard splits of seven UCI
regression sets (20 train/test splits each, 5 for protein) and commits one CSV file of records
per method under ``benchmarks/results/uci/``: one row per data set, method and split, with the
test RMSE, test log-likelihood, CRPS, 95% coverage and fit time. This example reads those files
with :func:`skfbnn.bench.report.read_records` and plots them; it fits nothing, so it runs in
seconds. The commands that produce the files are on the benchmarks page.
"""

# %%
# Read the records
# ----------------
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from skfbnn.bench.report import read_records

# sphinx_gallery_thumbnail_number = 2

RESULTS = Path("benchmarks", "results", "uci")
try:  # as a script, or in the docs build, whose copy of the example sits in docs/
    here = Path(__file__).resolve().parent
except NameError:  # interactively
    here = Path.cwd().resolve()
folder = next((p / RESULTS for p in (here, *here.parents) if (p / RESULTS).is_dir()), None)
if folder is None:
    raise FileNotFoundError(f"no {RESULTS} folder above {here}: run this in the repository")
files = sorted(folder.glob("*.csv"))
records = read_records(files)
print(f"{len(records)} records from {len(files)} files")

# %%
# Summarise: mean and standard error over the splits
# --------------------------------------------------
# The method names in the files are the registry keys (``skfbnn methods``); the exact GP's
# records come from scikit-learn's ``GaussianProcessRegressor``.

FAMILY = {"sgld": "SG-MCMC", "sghmc": "SG-MCMC", "fsgld": "SG-MCMC", "fsghmc": "SG-MCMC",
          "pcn": "Metropolis-Hastings", "pcnl": "Metropolis-Hastings",
          "mala": "Metropolis-Hastings",
          "bbb": "variational", "fbnn": "variational", "ifbnn": "variational",
          "ensemble": "ensemble", "ifbde": "ensemble"}
COLOUR = {"SG-MCMC": "C0", "Metropolis-Hastings": "C1", "variational": "C2", "ensemble": "C3",
          "reference": "0.4"}
SHORT = {"bostonHousing": "Boston", "protein-tertiary-structure": "protein",
         "wine-quality-red": "wine"}

# Wine has duplicated rows, which let the exact GP interpolate part of the test rows: its
# log-likelihood there is not comparable with the others and is left out.
NOT_COMPARABLE = {("wine-quality-red", "exact_gp")}

groups = defaultdict(list)
for r in records:
    if (r["dataset"], r["method"]) not in NOT_COMPARABLE:
        groups[(r["dataset"], r["method"])].append(r)


def summary(column):
    """``{(dataset, method): (mean, standard error)}`` of one column."""
    out = {}
    for key, rows in groups.items():
        values = np.array([row[column] for row in rows if column in row], dtype=float)
        values = values[np.isfinite(values)]
        if len(values) > 1:
            out[key] = (values.mean(), values.std(ddof=1) / np.sqrt(len(values)))
    return out


test_ll, coverage = summary("test_ll"), summary("coverage95")
datasets = sorted({d for d, _ in test_ll}, key=lambda d: SHORT.get(d, d).lower())
methods = [m for m in FAMILY if any((d, m) in test_ll for d in datasets)]
methods += sorted({m for _, m in test_ll} - set(methods))  # e.g. the exact GP

# %%
# Test log-likelihood per data set
# --------------------------------
# Higher is better; the bars are one standard error over the splits. Methods are coloured
# by family.

fig, axes = plt.subplots(2, 4, figsize=(12, 6.5))
for ax, dataset in zip(axes.ravel(), datasets, strict=False):
    for i, method in enumerate(methods):
        if (dataset, method) in test_ll:
            mean, se = test_ll[(dataset, method)]
            colour = COLOUR[FAMILY.get(method, "reference")]
            ax.errorbar(i, mean, yerr=se, fmt="o", color=colour, capsize=2, ms=4)
    ax.set_xticks(range(len(methods)), methods, rotation=90, fontsize=7)
    ax.set_title(SHORT.get(dataset, dataset), fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
axes[0, 0].set_ylabel("test log-likelihood")
axes[1, 0].set_ylabel("test log-likelihood")
legend = axes.ravel()[-1]
legend.axis("off")
for family, colour in COLOUR.items():
    legend.plot([], [], "o", color=colour, label=family)
legend.legend(loc="center", frameon=False)
fig.tight_layout()
plt.show()

# %%
# Calibration: 95% coverage
# -------------------------
# The fraction of test targets inside each method's central 95% predictive interval,
# averaged over the splits; a calibrated method sits near the dashed line at 0.95.

fig, ax = plt.subplots(figsize=(9, 3.5))
for j, dataset in enumerate(datasets):
    for i, method in enumerate(methods):
        if (dataset, method) in coverage:
            mean, _ = coverage[(dataset, method)]
            ax.plot(i + (j - 3) * 0.08, mean, "o", ms=4,
                    color=COLOUR[FAMILY.get(method, "reference")], alpha=0.8)
ax.axhline(0.95, color="black", ls="--", lw=1)
ax.set_xticks(range(len(methods)), methods, rotation=45, fontsize=8)
ax.set_ylabel("95% coverage (one point per data set)")
fig.tight_layout()
plt.show()

# %%
# The same numbers as a table (test log-likelihood, mean over the splits):

print("method".ljust(10) + "".join(SHORT.get(d, d)[:8].rjust(9) for d in datasets))
for method in methods:
    cells = [f"{test_ll[(d, method)][0]:9.3f}" if (d, method) in test_ll else " " * 9
             for d in datasets]
    print(method.ljust(10) + "".join(cells))
