"""Convergence diagnostics (:mod:`.convergence`: rank-normalised split R-hat and
ESS, Vehtari et al. 2021) and the fit-time checks built on them (:mod:`.checks`)."""

from .checks import (
    DISAGREEMENT_LIMIT,
    MC_ERROR_LIMIT,
    SamplerWarning,
    collapsed_chains,
    lagging_chains,
    optimisation_warnings,
    predictive_mixing,
    predictive_spread,
    summarize,
)
from .convergence import ess_bulk, ess_mean, ess_tail, split_rhat

__all__ = ["DISAGREEMENT_LIMIT", "MC_ERROR_LIMIT", "SamplerWarning", "ess_bulk", "ess_mean",
           "ess_tail", "split_rhat", "summarize", "lagging_chains", "optimisation_warnings",
           "predictive_spread", "predictive_mixing", "collapsed_chains"]
