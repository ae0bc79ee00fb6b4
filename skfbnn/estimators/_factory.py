"""The named estimator pair of a registry entry, made from the entry alone.

``estimator_pair("sgld")`` returns ``(SGLDRegressor, SGLDClassifier)``: classes whose
``__init__``, parameter constraints and docstring (Parameters from the tables, the
entry's title, description and reference, an example sized for the method's family)
derive from :data:`skfbnn.inference.registry.METHODS`. The classes live in
:mod:`skfbnn.estimators` (their ``__module__``), so they pickle and their docstring
examples run as doctests there.
"""

from __future__ import annotations

import textwrap

from sklearn.base import ClassifierMixin, RegressorMixin

from ..inference.registry import METHODS, MethodSpec
from ._arviz import ArviZMixin
from ._classification import BayesianClassifierBase
from ._regression import BayesianRegressorBase

__all__ = ["estimator_pair", "estimator_names", "EXAMPLE_BUDGETS"]

MODULE = "skfbnn.estimators"

EXAMPLE_BUDGETS = {
    "sgmcmc": "n_chains=2, n_burnin=200, n_samples=10, thinning=5",
    "mh": "hidden_layer_sizes=(32,), n_chains=2, n_burnin=50, n_samples=5, thinning=2",
    "vi": "n_iter=100",
    "ensemble": "n_iter=100, min_epochs=0",
}
"""Small run lengths of each family for the docstring examples (seconds on a CPU)."""

_ATTRIBUTES = {
    "particles": "posterior_ : Particles\n    Kept draws, ``(n_chains, n_samples)`` parameter "
                 "sets.",
    "mean_field": "posterior_ : MeanFieldGaussian\n    Variational means and standard "
                  "deviations and the prediction draws fixed at fit time.",
    "ensemble": "posterior_ : Ensemble\n    The members' parameters.",
}
_DIAGNOSTICS = {
    True: "diagnostics_ : dict\n    Log-posterior trace, split R-hat and ESS of the "
          "predictions at probe rows, the checks' entries and ``warnings``.",
    False: "diagnostics_ : dict\n    ``objective`` at every step, ``trace`` (every traced "
           "statistic), the checks' entries and ``warnings``.",
}

_cache: dict[str, tuple[type, type]] = {}


def estimator_names(name: str) -> tuple[str, str]:
    """The class names of method ``name``'s pair.

    Examples
    --------
    >>> estimator_names("fsgld")
    ('FunctionalSGLDRegressor', 'FunctionalSGLDClassifier')
    """
    stem = METHODS[name].estimator
    if stem is None:
        raise ValueError(f"method {name!r} declares no named estimator pair.")
    return f"{stem}Regressor", f"{stem}Classifier"


def estimator_pair(name: str) -> tuple[type, type]:
    """``(Regressor, Classifier)`` of registered method ``name``, made once.

    Examples
    --------
    >>> reg, clf = estimator_pair("bbb")
    >>> reg.__name__, clf.__name__, reg.__module__
    ('BBBRegressor', 'BBBClassifier', 'skfbnn.estimators')
    """
    spec = METHODS[name]
    cached = _cache.get(name)
    if cached is not None and cached[0]._spec_at_creation is spec:
        return cached
    regressor, classifier = estimator_names(name)
    mixins = (ArviZMixin,) if spec.family == "mh" else ()
    pair = (
        _make_class(regressor, (*mixins, RegressorMixin, BayesianRegressorBase), name, spec,
                    classifier),
        _make_class(classifier, (*mixins, ClassifierMixin, BayesianClassifierBase), name,
                    spec, regressor),
    )
    _cache[name] = pair
    return pair


def _make_class(class_name: str, bases: tuple, name: str, spec: MethodSpec,
                twin: str) -> type:
    classification = class_name.endswith("Classifier")
    namespace = {
        "__module__": MODULE,
        "__qualname__": class_name,
        "__doc__": _docstring(class_name, name, spec, classification, twin),
        "_method": name,
        "_spec_at_creation": spec,
    }
    return type(class_name, bases, namespace)


def _docstring(class_name: str, name: str, spec: MethodSpec, classification: bool,
               twin: str) -> str:
    task = "classification" if classification else "regression"
    lines = [f"Bayesian neural-network {task} by {spec.title or name}.", ""]
    if spec.description:
        lines += [*textwrap.wrap(spec.description, 84), ""]
    lines += ["{parameters}", "", "Attributes", "----------"]
    if classification:
        lines += ["classes_ : ndarray of shape (n_classes,)", "    The class labels."]
    lines += [*_ATTRIBUTES[spec.posterior].split("\n"),
              *_DIAGNOSTICS[_chains(spec)].split("\n")]
    if spec.prior == "function":
        lines += ["prior_ : GPPrior", "    The fitted GP prior (None for an implicit prior)."]
    lines += ["", "See Also", "--------", f"{twin} : the same method for "
              f"{'regression' if classification else 'classification'}."]
    if spec.reference:
        lines += ["", "References", "----------", *textwrap.wrap(spec.reference, 84)]
    lines += ["", "Examples", "--------", *_example(class_name, spec, classification)]
    return "\n    ".join(lines) + "\n    "


def _chains(spec: MethodSpec) -> bool:
    return spec.family in ("sgmcmc", "mh")


def _example(class_name: str, spec: MethodSpec, classification: bool) -> list[str]:
    budget = EXAMPLE_BUDGETS.get(spec.family, "")
    args = f"{budget}, random_state=0" if budget else "random_state=0"
    if classification:
        return [
            ">>> from sklearn.datasets import make_moons",
            f">>> from skfbnn.estimators import {class_name}",
            ">>> X, y = make_moons(60, noise=0.2, random_state=0)",
            f">>> clf = {class_name}({args}).fit(X, y)",
            ">>> clf.predict_proba(X[:2]).sum(axis=1).round(6).tolist()",
            "[1.0, 1.0]",
        ]
    return [
        f">>> from skfbnn.estimators import {class_name}",
        ">>> from skfbnn.datasets import make_oscillation",
        ">>> X, y = make_oscillation(random_state=0)",
        f">>> est = {class_name}({args}).fit(X, y)",
        ">>> mean, std = est.predict(X[:3], return_std=True)",
        ">>> mean.shape, bool((std > 0).all())",
        "((3,), True)",
    ]
