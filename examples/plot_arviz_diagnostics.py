"""
Posterior diagnostics with ArviZ
================================

Every sampler reports convergence diagnostics of its **predictions** in ``diagnostics_``:
rank-normalised split R-hat and bulk and tail effective sample sizes (Vehtari et al. 2021) at
up to 64 training inputs, and warnings measured in predictive standard deviations. The
Metropolis-Hastings samplers also export their draws to ArviZ with ``to_arviz()``; for the
other samplers, ``predict_draws`` gives the draws, chain-major, and ``arviz.from_dict`` does the
rest. This example does both, on short runs (a **reduced budget**: a few hundred steps per
chain), and needs ArviZ (``pip install -e ".[arviz]"``).
"""

# %%
# A Metropolis-Hastings sampler: ``to_arviz()``
# ---------------------------------------------
import arviz as az
import matplotlib.pyplot as plt
import numpy as np

from skfbnn import PCNLRegressor, SGHMCRegressor
from skfbnn.datasets import make_oscillation

X, y = make_oscillation(40, noise_std=0.3, random_state=0)

pcnl = PCNLRegressor(n_chains=4, n_burnin=600, n_samples=100, thinning=2, random_state=0)
pcnl.fit(X, y)
d = pcnl.diagnostics_
print("acceptance rate per chain:", np.round(d["acceptance_rate"], 2))
print(f"max R-hat {d['max_r_hat']:.3f}, min bulk ESS {d['min_ess_bulk']:.0f}, "
      f"warnings: {[w.kind for w in d['warnings']]}")

# %%
# ``to_arviz()`` returns an ``InferenceData``: the draws' network outputs ``f`` at the probe
# rows (dims chain, draw, point, output), the learned log noise, and the sample statistics of
# the kept steps (log posterior ``lp``, acceptance probability, step size).

idata = pcnl.to_arviz()
print(idata)
summary = az.summary(idata, var_names=["f", "log_noise"], kind="diagnostics")
print(summary.head(8))

# %%
# A trace plot of the learned log noise and of the function at two probe points: four chains
# that overlap and a flat trace mean the chains agree.

az.plot_trace(idata, var_names=["log_noise", "f"],
              coords={"point": [0, 39], "output": [0]}, compact=False, figsize=(9, 6))
plt.tight_layout()
plt.show()

# %%
# The rank plot is the sharper check: with mixed chains each chain's ranks among all draws
# are uniform, so the bars are flat.

az.plot_rank(idata, var_names=["log_noise"], figsize=(5, 3))
plt.tight_layout()
plt.show()

# %%
# A stochastic-gradient sampler: ``predict_draws``
# ------------------------------------------------
# ``predict_draws(X)`` returns every stored draw's function values and noise, chain-major
# (chain 0's draws first), so a reshape to ``(n_chains, n_samples, n)`` gives ArviZ's
# ``(chain, draw, ...)`` layout, at any inputs, here a grid that includes the gap between the
# two clusters of data.

sghmc = SGHMCRegressor(n_chains=4, n_burnin=600, n_samples=25, thinning=8, min_epochs=0,
                       random_state=0).fit(X, y)
grid = np.linspace(-1, 1, 9)[:, None]
f, noise_std = sghmc.predict_draws(grid)
draws = az.from_dict(posterior={"f": f.reshape(4, 25, len(grid)),
                                "log_noise": np.log(noise_std).reshape(4, 25)},
                     dims={"f": ["x"]}, coords={"x": grid.ravel()})
print(az.summary(draws, kind="diagnostics"))

# %%
# skfbnn's own numbers use the same definitions; R-hat above 1.01 is common for network
# posteriors even when the predictive is accurate, which is why the warnings that ``fit``
# raises are measured in predictive standard deviations instead (chains more than 0.5 apart,
# a Monte-Carlo error above 0.2):

d = sghmc.diagnostics_
print(f"max R-hat {d['max_r_hat']:.3f}, max chain disagreement "
      f"{d['max_chain_disagreement']:.2f} predictive std, max Monte-Carlo error "
      f"{d['max_mc_error']:.2f}, warnings: {[w.kind for w in d['warnings']]}")
