"""The method registry: one entry per inference method, the single source of the package.

An entry (:class:`MethodSpec`) declares everything the rest of the package reads about a
method: the module with its update rule (``build``) and its parameters (``HYPER``), its
*family* (the run policy, a folder of :mod:`skfbnn.inference`: ``sgmcmc``, ``mh``, ``vi``,
``ensemble``; see :mod:`skfbnn.inference.families`), its *prior* (``"weight"``: a Gaussian
on the weights; ``"function"``: a GP prior at measurement points; ``"ntk"``:
standard-normal entries of the NTK parameterisation), its fitted *posterior* kind (see
:mod:`skfbnn.posterior`) and every optional hook. Nothing else about a method is looked up.

The named estimator pair (``<estimator>Regressor`` and ``<estimator>Classifier``), the
export lists, the parameter sets and the test cases all derive from these entries, so a
new method is its module plus one entry here (see :func:`register` for a method added at
run time).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any

from .._hyper import Param
from ..priors.params import FUNCTIONAL_SAMPLER, LEARNED_WEIGHT, PRIOR_PARAMS
from .ensemble import deep_ensemble, ifbde
from .ensemble.random_function import randomized
from .families import FAMILIES
from .mh import build as mh_build
from .mh import mala, pcn, pcnl
from .sgmcmc import sghmc, sgld
from .vi import bbb, fbnn, ifbnn

__all__ = ["MethodSpec", "METHODS", "POSTERIOR_KINDS", "PRIOR_KINDS", "register"]

PRIOR_KINDS = ("weight", "function", "ntk")
POSTERIOR_KINDS = ("particles", "mean_field", "ensemble")
NOISE_KINDS = ("shared", "heads")


@dataclass(frozen=True)
class MethodSpec:
    """Everything the package knows about one inference method.

    Parameters
    ----------
    module : module
        Holds ``build(problem, **hyper) -> Transform`` and ``HYPER``, the table of the
        method's own parameters.
    family : {"sgmcmc", "mh", "vi", "ensemble"}
        The run policy (:data:`skfbnn.inference.families.FAMILIES`).
    prior : {"weight", "function", "ntk"}
        The kind of network prior (:func:`skfbnn.priors.build.make_prior`).
    posterior : {"particles", "mean_field", "ensemble"}
        The fitted container (:data:`skfbnn.posterior.POSTERIORS`).
    estimator : str or None
        Stem of the named estimator pair (``"SGLD"``: ``SGLDRegressor`` and
        ``SGLDClassifier``); None: reachable only through ``BayesianNetRegressor(method=...)``.
    title : str
        What the method is, in a few words (the estimators' first docstring line).
    description : str
        A paragraph for the estimators' docstrings.
    reference : str
        The paper, for the docstrings' References section.
    architecture : mapping
        The method's own defaults of ``hidden_layer_sizes`` and ``activation``, replacing
        the library-wide ones (the one place the network's shape comes from).
    noise : {"shared", "heads"}
        A learned regression noise is one posterior parameter (``"shared"``) or a
        variance head per output (``"heads"``).
    regression_hyper, classification_hyper : tuple of Param
        Parameters (or other defaults) the regressor or the classifier adds.
    prior_hyper : tuple of Param or None
        The prior's parameters; None: those of the prior kind
        (:data:`skfbnn.priors.params.PRIOR_PARAMS`).
    classification_likelihood : callable or None
        ``classification_likelihood(hyper) -> likelihood`` replacing the softmax.
    wrap_forward : callable or None
        ``wrap_forward(forward) -> forward`` applied to the network's forward function in
        training and prediction (e.g. a fixed random function added to every member).
    """

    module: ModuleType
    family: str
    prior: str
    posterior: str
    estimator: str | None = None
    title: str = ""
    description: str = ""
    reference: str = ""
    architecture: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    noise: str = "shared"
    regression_hyper: tuple[Param, ...] = ()
    classification_hyper: tuple[Param, ...] = ()
    prior_hyper: tuple[Param, ...] | None = None
    classification_likelihood: Callable[[dict], Any] | None = None
    wrap_forward: Callable[[Callable], Callable] | None = None

    def __post_init__(self) -> None:
        for name, value, allowed in (("family", self.family, tuple(FAMILIES)),
                                     ("prior", self.prior, PRIOR_KINDS),
                                     ("posterior", self.posterior, POSTERIOR_KINDS),
                                     ("noise", self.noise, NOISE_KINDS)):
            if value not in allowed:
                raise ValueError(f"MethodSpec {name} must be one of {allowed}. Got {value!r}.")
        unknown = set(self.architecture) - {"hidden_layer_sizes", "activation"}
        if unknown:
            raise ValueError("MethodSpec architecture may set hidden_layer_sizes and "
                             f"activation only. Got {sorted(unknown)}.")

    @property
    def build(self) -> Callable:
        """The module's ``build(problem, **hyper) -> Transform``."""
        return self.module.build

    @property
    def own_hyper(self) -> tuple[Param, ...]:
        """The module's ``HYPER`` table."""
        return tuple(self.module.HYPER)

    @property
    def hyper(self) -> tuple[str, ...]:
        """Names of the module's own hyperparameters that ``build`` takes: every ``HYPER``
        entry but a method's own default of a run-policy (family) parameter, such as BBB's
        ``n_iter``, which goes to the run."""
        policy = {p.name for p in FAMILIES[self.family].params}
        return tuple(p.name for p in self.own_hyper if p.name not in policy)

    @property
    def prior_params(self) -> tuple[Param, ...]:
        """The prior's parameters: ``prior_hyper``, or the prior kind's table."""
        return PRIOR_PARAMS[self.prior] if self.prior_hyper is None else self.prior_hyper

    def task_hyper(self, task: str) -> tuple[Param, ...]:
        """The parameters (or defaults) that the ``task``'s estimator adds."""
        if task not in ("regression", "classification"):
            raise ValueError(f"task must be 'regression' or 'classification'. Got {task!r}.")
        return self.regression_hyper if task == "regression" else self.classification_hyper


_MH = dict(family="mh", prior="ntk", posterior="particles",
           architecture=MappingProxyType(mh_build.ARCHITECTURE),
           classification_hyper=mh_build.CLASSIFICATION_HYPER,
           classification_likelihood=mh_build.classification_likelihood,
           reference="Pezzetti, Favaro & Peluchetti (2024). Function-space MCMC for Bayesian "
                     "wide neural networks.")
_MH_DESCRIPTION = (
    "The network is NTK-parameterised (every weight and bias standard normal a priori) with "
    "a Gaussian likelihood; with ``reparametrize=True`` the readout is sampled in the "
    "data-dependent coordinates of Hron et al. (2022), in which the posterior tends to "
    "N(0, I) as the width grows. Classification regresses shifted one-hot targets "
    "``onehot(y) - 1/K`` with Gaussian noise ``noise_std``, as the paper does.")
_FSG = ("Each step adds ``log N(f(X_M); m, K_MM + nugget I)`` at a fresh measurement set "
        "``X_M`` (training inputs and points in the widened input box) to the log "
        "likelihood; the GP hyperparameters are pre-fitted by marginal likelihood. Without "
        "``weight_prior_std`` the weight posterior is improper, so diagnose on predictions "
        "(``diagnostics_``), never on weights.")
_FSG_REF = ("Wu, Xuan & Lu (2025). Functional Stochastic Gradient MCMC for Bayesian Neural "
            "Networks. AISTATS.")
_ENSEMBLE = dict(family="ensemble", posterior="ensemble",
                 architecture=MappingProxyType(deep_ensemble.ARCHITECTURE), noise="heads")

METHODS: dict[str, MethodSpec] = {
    "sgld": MethodSpec(
        sgld, "sgmcmc", "weight", "particles", estimator="SGLD", prior_hyper=LEARNED_WEIGHT,
        title="SGLD (stochastic-gradient Langevin dynamics) with a Gaussian weight prior",
        description="Chains run in parallel, vectorised over a leading dimension, with an "
                    "adaptive diagonal preconditioner during burn-in.",
        reference="Welling & Teh (2011). Bayesian Learning via Stochastic Gradient Langevin "
                  "Dynamics. ICML."),
    "fsgld": MethodSpec(
        sgld, "sgmcmc", "function", "particles", estimator="FunctionalSGLD",
        prior_hyper=FUNCTIONAL_SAMPLER,
        title="functional SGLD: SGLD with a GP prior on function values",
        description=_FSG, reference=_FSG_REF),
    "sghmc": MethodSpec(
        sghmc, "sgmcmc", "weight", "particles", estimator="SGHMC", prior_hyper=LEARNED_WEIGHT,
        title="SGHMC (stochastic-gradient Hamiltonian Monte Carlo) with a Gaussian weight prior",
        description="SGHMC with friction and the momentum refreshed every ``n_leapfrog`` "
                    "steps; chains run in parallel, vectorised over a leading dimension.",
        reference="Chen, Fox & Guestrin (2014). Stochastic Gradient Hamiltonian Monte Carlo. "
                  "ICML."),
    "fsghmc": MethodSpec(
        sghmc, "sgmcmc", "function", "particles", estimator="FunctionalSGHMC",
        prior_hyper=FUNCTIONAL_SAMPLER,
        title="functional SGHMC: SGHMC with a GP prior on function values",
        description=_FSG, reference=_FSG_REF),
    "pcn": MethodSpec(
        pcn, **_MH, estimator="PCN", description=_MH_DESCRIPTION,
        title="preconditioned Crank-Nicolson Metropolis-Hastings on the reparametrised "
              "wide-network posterior"),
    "pcnl": MethodSpec(
        pcnl, **_MH, estimator="PCNL", description=_MH_DESCRIPTION,
        title="pCN with a Langevin drift (pCNL) on the reparametrised wide-network posterior"),
    "mala": MethodSpec(
        mala, **_MH, estimator="MALA", description=_MH_DESCRIPTION,
        title="Metropolis-adjusted Langevin (MALA) on the reparametrised wide-network "
              "posterior"),
    "bbb": MethodSpec(
        bbb, "vi", "weight", "mean_field", estimator="BBB",
        title="Bayes by backprop: mean-field Gaussian variational inference",
        description="A factorised Gaussian over every weight and bias is fitted by "
                    "maximising the ELBO with the reparameterisation trick and the "
                    "closed-form KL to the isotropic Gaussian prior. ``n_samples`` weight "
                    "draws are fixed at fit time and make every prediction.",
        reference="Blundell, Cornebise, Kavukcuoglu & Wierstra (2015). Weight Uncertainty "
                  "in Neural Networks. ICML."),
    "ensemble": MethodSpec(
        deep_ensemble, prior="weight", **_ENSEMBLE, estimator="DeepEnsemble",
        regression_hyper=deep_ensemble.REGRESSION_HYPER,
        title="deep ensembles, the members trained together as one batch",
        description="``n_estimators`` networks with Gaussian heads (a mean and a variance "
                    "per output when ``noise_std='learn'``) are trained by Adam, each on its "
                    "own rows, vectorised over a member dimension. The predictive is the "
                    "uniform mixture of the members. With ``prior_std`` each member is a MAP "
                    "estimate under a Gaussian weight prior.",
        reference="Lakshminarayanan, Pritzel & Blundell (2017). Simple and Scalable "
                  "Predictive Uncertainty Estimation using Deep Ensembles. NeurIPS."),
    "fbnn": MethodSpec(
        fbnn, "vi", "function", "mean_field", estimator="FBNN",
        architecture=MappingProxyType(fbnn.ARCHITECTURE),
        regression_hyper=fbnn.REGRESSION_HYPER, classification_hyper=fbnn.CLASSIFICATION_HYPER,
        title="functional variational BNN, the KL gradient estimated by SSGE",
        description="A mean-field Gaussian over the weights is fitted by the functional "
                    "ELBO: the expected log-likelihood minus the KL divergence between the "
                    "network's function values and a GP prior (or an implicit prior) at a "
                    "measurement set redrawn every step.",
        reference="Sun, Zhang, Shi & Grosse (2019). Functional Variational Bayesian Neural "
                  "Networks. ICLR."),
    "ifbnn": MethodSpec(
        ifbnn, "vi", "function", "mean_field", estimator="IFBNN",
        architecture=MappingProxyType(ifbnn.ARCHITECTURE), regression_hyper=ifbnn.REGRESSION_HYPER,
        title="implicit functional BNN: mean-field VI regularised by the 2-Wasserstein "
              "distance of the linearised network to a GP prior",
        description="The expected log-likelihood minus ``beta`` times the squared "
                    "2-Wasserstein distance between the network linearised at its mean (a "
                    "Gaussian over function values, covariance ``J diag(sigma^2) J^T``) and "
                    "the GP prior, on a measurement set redrawn every step."),
    "ifbde": MethodSpec(
        ifbde, prior="function", **_ENSEMBLE, estimator="IFBDE",
        regression_hyper=ifbde.REGRESSION_HYPER, wrap_forward=randomized,
        title="implicit functional Bayesian deep ensemble",
        description="The members of a deep ensemble are trained together; each is "
                    "linearised into a GP by its empirical NTK, and ``beta`` times the "
                    "squared 2-Wasserstein distance from the members' barycenter to a GP "
                    "prior regularises the whole ensemble (``beta=0``: the deep ensemble)."),
}


def register(name: str, spec: MethodSpec) -> MethodSpec:
    """Add a method to :data:`METHODS` at run time (e.g. from a plugin or a test).

    Its estimator pair, when ``spec.estimator`` names one, is then importable as
    ``skfbnn.estimators.<estimator>Regressor`` and ``...Classifier``, and
    ``BayesianNetRegressor(method=name)`` runs it.

    Raises
    ------
    ValueError
        When ``name`` is taken by another entry.
    """
    if name in METHODS and METHODS[name] != spec:
        raise ValueError(f"method {name!r} is already registered.")
    METHODS[name] = spec
    return spec
