"""Published UCI test log-likelihoods and RMSEs (original units, 20 standard splits).

PBP: Hernandez-Lobato & Adams (2015), Tables 1-2; VI: Graves-style variational inference as
reported there; MC dropout: Gal & Ghahramani (2016), Table 1; Deep Ensembles:
Lakshminarayanan, Pritzel & Blundell (2017), Table 1. Values are (RMSE, test LL).
"""

from __future__ import annotations

PBP = {
    "bostonHousing": (3.01, -2.57), "concrete": (5.67, -3.16), "energy": (1.80, -2.04),
    "kin8nm": (0.10, 0.90), "protein-tertiary-structure": (4.73, -2.97),
    "wine-quality-red": (0.64, -0.97), "yacht": (1.02, -1.63),
}
MC_DROPOUT = {
    "bostonHousing": (2.97, -2.46), "concrete": (5.23, -3.04), "energy": (1.66, -1.99),
    "kin8nm": (0.10, 0.95), "protein-tertiary-structure": (4.36, -2.89),
    "wine-quality-red": (0.62, -0.93), "yacht": (1.11, -1.55),
}
DEEP_ENSEMBLES = {
    "bostonHousing": (3.28, -2.41), "concrete": (6.03, -3.06), "energy": (2.09, -1.38),
    "kin8nm": (0.09, 1.20), "protein-tertiary-structure": (4.71, -2.83),
    "wine-quality-red": (0.64, -0.94), "yacht": (1.58, -1.18),
}
VI = {
    "bostonHousing": (4.32, -2.90), "concrete": (7.13, -3.39), "energy": (2.65, -2.39),
    "kin8nm": (0.10, 0.90), "protein-tertiary-structure": (4.84, -2.99),
    "wine-quality-red": (0.65, -0.98), "yacht": (6.89, -3.43),
}
