#!/usr/bin/env bash
# UCI regression on the standard splits: all four SG-MCMC regressors, default hyperparameters.
# Records go to benchmarks/results/uci/<dataset>.csv (resumable: finished splits are skipped);
# the table and plot are then rebuilt with `skfbnn report`.
# Usage: bash benchmarks/run_uci.sh [DATA_HOME] [PARALLEL]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_HOME=${1:-../shared/data/uci}
PARALLEL=${2:-2}
mkdir -p benchmarks/results/uci
printf '%s\n' yacht bostonHousing energy concrete wine-quality-red kin8nm protein-tertiary-structure |
  xargs -P "$PARALLEL" -I{} sh -c \
    "skfbnn bench --dataset {} --data-home '$DATA_HOME' --methods sgld,fsgld,sghmc,fsghmc \
       --out benchmarks/results/uci/{}.csv > benchmarks/results/uci/{}.log 2>&1"
skfbnn report benchmarks/results/uci/*.csv --markdown benchmarks/results/uci_table.md \
  --plot docs/images/uci_test_ll.png
