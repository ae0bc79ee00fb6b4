"""The method registry: one line per inference method.

Each line names the method's module (its ``build`` and its ``HYPER`` table of
estimator parameters), its *family* (the run policy, see
:mod:`skfbnn.inference.families`), its *prior* (``"weight"``: isotropic
Gaussian on the weights; ``"function"``: GP prior at measurement points;
``"ntk"``: standard-normal entries of the NTK parameterisation) and
its *posterior* kind (the fitted container, see :mod:`skfbnn.posterior`).
A functional variant is the same module with ``prior="function"``.
"""

from __future__ import annotations

from types import ModuleType
from typing import NamedTuple

from .ensemble import deep_ensemble, ifbde
from .families import FAMILIES
from .mh import mala, pcn, pcnl
from .sgmcmc import sghmc, sgld
from .vi import bbb, fbnn, ifbnn

__all__ = ["MethodSpec", "METHODS", "POSTERIOR_KINDS", "PRIOR_KINDS"]

PRIOR_KINDS = ("weight", "function", "ntk")
POSTERIOR_KINDS = ("particles", "mean_field", "linearized", "ensemble")


class MethodSpec(NamedTuple):
    """How to build a method, how to run it, its prior and what it fits."""

    module: ModuleType
    family: str
    prior: str
    posterior: str

    @property
    def build(self):
        """The module's ``build(problem, **hyper) -> Transform``."""
        return self.module.build

    @property
    def hyper(self) -> tuple[str, ...]:
        """Names of the module's own hyperparameters that ``build`` takes: every ``HYPER``
        entry but a method's own default of a run-policy (family) parameter, such as BBB's
        ``n_iter``, which goes to the run."""
        policy = {p.name for p in FAMILIES[self.family].params}
        return tuple(p.name for p in self.module.HYPER if p.name not in policy)

    @property
    def architecture(self) -> dict:
        """The method's own defaults of the network's shape (``hidden_layer_sizes``,
        ``activation``), replacing the library-wide ones; empty for most methods."""
        return dict(getattr(self.module, "ARCHITECTURE", {}))


METHODS: dict[str, MethodSpec] = {
    "sgld": MethodSpec(sgld, family="sampler", prior="weight", posterior="particles"),
    "fsgld": MethodSpec(sgld, family="sampler", prior="function", posterior="particles"),
    "sghmc": MethodSpec(sghmc, family="sampler", prior="weight", posterior="particles"),
    "fsghmc": MethodSpec(sghmc, family="sampler", prior="function", posterior="particles"),
    "pcn": MethodSpec(pcn, family="accept_reject", prior="ntk", posterior="particles"),
    "pcnl": MethodSpec(pcnl, family="accept_reject", prior="ntk", posterior="particles"),
    "mala": MethodSpec(mala, family="accept_reject", prior="ntk", posterior="particles"),
    "bbb": MethodSpec(bbb, family="optimization", prior="weight", posterior="mean_field"),
    "ensemble": MethodSpec(deep_ensemble, family="ensemble", prior="weight",
                           posterior="ensemble"),
    "fbnn": MethodSpec(fbnn, family="optimization", prior="function", posterior="mean_field"),
    "ifbnn": MethodSpec(ifbnn, family="optimization", prior="function", posterior="mean_field"),
    "ifbde": MethodSpec(ifbde, family="ensemble", prior="function", posterior="ensemble"),
}
