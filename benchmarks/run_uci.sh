#!/usr/bin/env bash
# UCI regression on the standard splits, default hyperparameters; by default the four SG-MCMC
# regressors, or the comma-separated methods in the METHODS environment variable.
# Records go to $OUT/<dataset>.csv (resumable: finished splits are skipped).
# Usage: [METHODS=m1,m2] bash benchmarks/run_uci.sh [DATA_HOME] [PARALLEL] [OUT] [KEY=VALUE ...]
#   e.g. bash benchmarks/run_uci.sh ../shared/data/uci 2 benchmarks/results/uci_decay schedule=decay
#        METHODS=bbb,ensemble bash benchmarks/run_uci.sh ../shared/data/uci 2 \
#            benchmarks/results/uci_vi_ensemble
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_HOME=${1:-../shared/data/uci}
PARALLEL=${2:-2}
OUT=${3:-benchmarks/results/uci}
METHODS=${METHODS:-sgld,fsgld,sghmc,fsghmc}
shift $(( $# < 3 ? $# : 3 ))
SET=""
[ $# -gt 0 ] && SET="--set $*"
mkdir -p "$OUT"
printf '%s\n' yacht bostonHousing energy concrete wine-quality-red kin8nm protein-tertiary-structure |
  xargs -P "$PARALLEL" -I{} sh -c \
    "skfbnn bench --dataset {} --data-home '$DATA_HOME' --methods '$METHODS' \
       --out '$OUT/{}.csv' $SET > '$OUT/{}.log' 2>&1"
skfbnn report "$OUT"/*.csv --markdown "$OUT/table.md"
