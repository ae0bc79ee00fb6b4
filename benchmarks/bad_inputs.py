"""Bad input against every named estimator: a clear error, a correct result or a warning.

Each case is run on every named estimator (regressor and classifier of every registered
method) with a tiny budget on a 60-row problem, and its outcome classified:

* ``clear error``: an exception naming the cause (its message holds the case's keyword);
* ``warned``: the fit ends and issues a warning of skfbnn's categories naming the cause;
* ``correct result``: the fit ends without such a warning and its result passes the case's
  check (e.g. predictions equal to those of a clean fit, or a training R^2 / accuracy within
  0.2 of the clean fit's);
* ``SILENT``: anything else (a poor result without a word, or an unclear error). The table
  should have none.

Writes one row per (estimator, case) to ``records.csv`` and the table of outcomes by family
to ``table.md`` (both under ``--out``, default ``benchmarks/results/bad_inputs/``), which
``docs/bad_inputs.md`` includes. A few minutes on two loaded cores:

    python benchmarks/bad_inputs.py

``--methods sgld bbb`` restricts the registry keys, ``--cases nan_x step`` the cases.

``--sweep`` measures instead what the warnings' thresholds rest on (``sweep.md``, about ten
minutes): on 200 training and 200 test rows, the training R^2 and the test RMSE of four
regressors with the inputs, or the targets without ``normalize_y``, scaled by factors from
0.01 to 1e6, and the training accuracy of fBNN and ifBNN classifiers at 1, 100 and 1000
times their learning rate.
"""

from __future__ import annotations

import argparse
import copy
import csv
import pickle
import sys
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV

import skfbnn
from skfbnn.estimators import estimator_pair
from skfbnn.exceptions import (
    ConstantTargetWarning,
    DataScaleWarning,
    PoorFitWarning,
    SamplerDivergenceWarning,
)
from skfbnn.inference.registry import METHODS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bad_inputs"
FAMILIES = {"sgmcmc": "SG-MCMC", "mh": "Metropolis-Hastings", "vi": "variational",
            "ensemble": "ensembles"}
FUNCTIONAL = dict(prior_fit_iter=5, n_measurement_points=10)
BUDGETS = {
    "sgmcmc": dict(n_chains=2, n_burnin=100, n_samples=4, thinning=5, min_epochs=0),
    "mh": dict(n_chains=2, n_burnin=60, n_samples=5, thinning=2),
    "vi": dict(n_iter=100, n_samples=8),
    "ensemble": dict(n_estimators=3, n_iter=100, min_epochs=0),
}
OURS = (DataScaleWarning, PoorFitWarning, SamplerDivergenceWarning, ConstantTargetWarning)


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] - 0.5 * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y, (y > np.median(y)).astype(int)


def make(cls, **kwargs):
    spec = METHODS[cls._method]
    budget = dict(BUDGETS[spec.family], **(FUNCTIONAL if spec.prior == "function" else {}))
    return cls(random_state=0, device="cpu", **{**budget, **kwargs})


def is_classifier(cls) -> bool:
    return "Classifier" in cls.__name__


def quality(est, X, y) -> float:
    """Training R^2 of the predictive mean, or training accuracy."""
    pred = est.predict(X)
    if is_classifier(type(est)):
        return float(np.mean(pred == y))
    return float(1 - np.mean((pred - y) ** 2) / np.var(y))


def fit(est, X, y, **kwargs):
    """``(fitted or exception, {category: message})`` of our warning categories."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **kwargs)
            result = est
        except Exception as err:  # noqa: BLE001 (classified below)
            result = err
    return result, {w.category: str(w.message) for w in record
                    if issubclass(w.category, OURS)}


def classify(result, found, keywords, check=lambda est: (True, ""), errors=None):
    """The outcome of a fit: an error holding one of ``errors`` (default ``keywords``) or a
    warning holding one of ``keywords``, else the result's ``check``."""
    if isinstance(result, BaseException):
        message = str(result)
        if any(k in message for k in (keywords if errors is None else errors)):
            return "clear error", f"{type(result).__name__}: {message[:160]}"
        return "SILENT", f"unclear {type(result).__name__}: {message[:160]}"
    named = [f"{c.__name__}: {m[:160]}" for c, m in found.items()
             if any(k in m for k in keywords)]
    if named:
        return "warned", named[0]
    ok, note = check(result)
    return ("correct result" if ok else "SILENT"), note


# ------------------------------------------------------------------ the cases
def case_nan(cls, X, y, clean, where):
    X, y = X.copy(), y.astype(float).copy()
    (X if where == "X" else y)[3] = np.nan
    return classify(*fit(make(cls), X, y), ["NaN"])


def case_inf(cls, X, y, clean):
    X = X.copy()
    X[3, 1] = np.inf
    return classify(*fit(make(cls), X, y), ["infinity"])


def case_empty(cls, X, y, clean):
    return classify(*fit(make(cls), X[:0], y[:0]), ["0 sample", "minimum of"])


def case_one_row(cls, X, y, clean):
    return classify(*fit(make(cls), X[:1], y[:1]), ["at least 2", "only one class"])


def case_constant(cls, X, y, clean):
    return classify(*fit(make(cls), X, np.full(len(X), y[0])),
                    ["constant", "only one class"])


def near_clean(X, y, clean, tolerance=0.2):
    """The check of a fit that should be about as good as the clean fit (``clean``: the
    clean fit and its score)."""
    def check(est):
        q = quality(est, X, y)
        return q >= clean[1] - tolerance, f"training score {q:.3f} (clean data {clean[1]:.3f})"
    return check


MEASURED = ["Measured: inputs far from unit scale", "Measured: targets far from unit scale"]
"""An error of a scale case must say what was measured (every divergence message lists the
inputs' scale among its likely causes)."""


def case_target_scale(cls, X, y, clean, factor, normalize=True):
    if is_classifier(cls):
        return "n/a", "classification"
    kwargs = {} if normalize else {"normalize_y": False}
    result, found = fit(make(cls, **kwargs), X, factor * y)
    return classify(result, found, ["unit scale"], near_clean(X, factor * y, clean), MEASURED)


def case_input_scale(cls, X, y, clean, factor):
    result, found = fit(make(cls), factor * X, y)
    return classify(result, found, ["unit scale"], near_clean(factor * X, y, clean), MEASURED)


def case_outlier(cls, X, y, clean):
    X = np.c_[X, np.zeros(len(X))]
    X[5, -1] = 1e6
    result, found = fit(make(cls), X, y)
    return classify(result, found, ["unit scale", "outlying"], near_clean(X, y, clean),
                    MEASURED)


def case_step(cls, X, y, clean):
    family = METHODS[cls._method].family
    name = "learning_rate" if family in ("vi", "ensemble") else "step_size"
    default = cls().get_params()[name]
    result, found = fit(make(cls, **{name: 100 * default}), X, y)
    # a step bounded by its constraint (pCN's at most 1) raises scikit-learn's error
    return classify(result, found, ["times its default", f"'{name}' parameter of"],
                    near_clean(X, y, clean))


class _Interrupt:
    """Raise KeyboardInterrupt at the ``at``-th line event in skfbnn's code."""

    package = str(Path(skfbnn.__file__).resolve().parent)

    def __init__(self, at):
        self.at, self.count = at, 0

    def __call__(self, frame, event, arg):
        if frame.f_code.co_name == "torch_state_kept" or \
                not frame.f_code.co_filename.startswith(self.package):
            return None
        return self.line

    def line(self, frame, event, arg):
        if event == "line":
            self.count += 1
            if self.count == self.at:
                raise KeyboardInterrupt
        return self.line


INTERRUPT_AT = 2000
"""The line event of skfbnn's code the interrupt lands on (a tiny fit runs 4000-13000)."""


def case_interrupt(cls, X, y, clean):
    """Interrupted inside the run (at line event :data:`INTERRUPT_AT`) from inside
    ``torch.no_grad()``: the interrupt reaches the caller, nothing is left fitted, grad mode
    and threads are as before, and a refit equals the clean fit."""
    est, threads = make(cls), torch.get_num_threads()
    with torch.no_grad():
        sys.settrace(_Interrupt(INTERRUPT_AT))
        try:
            est.fit(X, y)
            raised = False
        except KeyboardInterrupt:
            raised = True
        finally:
            sys.settrace(None)
        kept = not torch.is_grad_enabled() and torch.get_num_threads() == threads
    refit = quality(make(cls).fit(X, y), X, y)
    ok = raised and kept and not hasattr(est, "posterior_") and refit == clean[1]
    return ("correct result" if ok else "SILENT"), \
        f"interrupt raised {raised}, torch state kept {kept}, refit score {refit:.3f}"


def case_refit(cls, X, y, clean):
    """A refit on other data (one more feature, other rows) predicts what a fresh fit does."""
    X2, y2, c2 = data(50, seed=1)
    X2 = np.c_[X2, X2[:, 0] * X2[:, 1]]
    y2 = c2 if is_classifier(cls) else y2
    est = copy.deepcopy(clean[0])  # fitted on (X, y); refitted below
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X2, y2)
        fresh = make(cls).fit(X2, y2)
    ok = np.array_equal(est.predict(X2), fresh.predict(X2))
    return ("correct result" if ok else "SILENT"), "refit equals a fresh fit" if ok else \
        "refit differs from a fresh fit"


def case_pickle(cls, X, y, clean):
    est = clean[0]
    again = pickle.loads(pickle.dumps(est))
    method = "predict_proba" if is_classifier(cls) else "predict"
    ok = np.array_equal(getattr(est, method)(X), getattr(again, method)(X))
    return ("correct result" if ok else "SILENT"), "same predictions after pickling"


def case_search(cls, X, y, clean):
    """GridSearchCV over two prior scales with 2-fold cross-validation (scikit-learn's
    default scorer: R^2 or accuracy)."""
    name = next(p for p in ("prior_std", "noise_std", "hidden_layer_sizes")
                if p in cls().get_params())
    grid = {"prior_std": [0.5, 1.0], "noise_std": [0.1, 0.2],
            "hidden_layer_sizes": [(8,), (16,)]}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(make(cls), {name: grid}, cv=2, error_score="raise",
                              refit=False).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    ok = bool(np.isfinite(scores).all())
    return ("correct result" if ok else "SILENT"), f"{name} over {grid}: scores " + \
        ", ".join(f"{s:.2f}" for s in scores)


def case_weights_one(cls, X, y, clean):
    """``sample_weight`` of ones: the unweighted fit exactly."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = make(cls).fit(X, y, sample_weight=np.ones(len(X)))
    b = clean[0]
    method = "predict_proba" if is_classifier(cls) else "predict"
    ok = np.array_equal(getattr(a, method)(X), getattr(b, method)(X))
    return ("correct result" if ok else "SILENT"), "equal to the unweighted fit"


def case_weights(cls, X, y, clean):
    """Weights 0 on a third of the rows: a fit about as good on the others as a clean fit."""
    w = np.ones(len(X))
    w[::3] = 0.0
    result, found = fit(make(cls), X, y, sample_weight=w)
    keep = w > 0
    return classify(result, found, ["sample_weight"], near_clean(X[keep], y[keep], clean))


def case_weights_negative(cls, X, y, clean):
    w = np.ones(len(X))
    w[0] = -1.0
    return classify(*fit(make(cls), X, y, sample_weight=w), ["Negative", "sample_weight"])


def case_no_grad(cls, X, y, clean):
    with torch.no_grad():
        result, found = fit(make(cls), X, y)
        still_off = not torch.is_grad_enabled()
    outcome, note = classify(result, found, ["no_grad"], near_clean(X, y, clean))
    if outcome == "correct result" and not still_off:
        return "SILENT", "grad mode changed"
    return outcome, note


CASES = {
    "nan_x": ("NaN in X", lambda *a: case_nan(*a, "X")),
    "nan_y": ("NaN in y", lambda *a: case_nan(*a, "y")),
    "inf_x": ("infinity in X", case_inf),
    "empty": ("no rows", case_empty),
    "one_row": ("one row", case_one_row),
    "constant_y": ("constant targets", case_constant),
    "y_huge": ("targets x 1e8", lambda *a: case_target_scale(*a, 1e8)),
    "y_tiny": ("targets x 1e-8", lambda *a: case_target_scale(*a, 1e-8)),
    "y_huge_raw": ("targets x 1e8, normalize_y=False",
                   lambda *a: case_target_scale(*a, 1e8, normalize=False)),
    "x_huge": ("inputs x 1e6", lambda *a: case_input_scale(*a, 1e6)),
    "x_tiny": ("inputs x 1e-6", lambda *a: case_input_scale(*a, 1e-6)),
    "outlier": ("a constant column with one row at 1e6", case_outlier),
    "step": ("step 100x its default", case_step),
    "interrupt": ("interrupt inside the run, in no_grad", case_interrupt),
    "refit": ("refit on other data", case_refit),
    "pickle": ("pickling", case_pickle),
    "search": ("GridSearchCV, 2-fold", case_search),
    "no_grad": ("fit inside torch.no_grad()", case_no_grad),
    "weights_one": ("sample_weight of ones", case_weights_one),
    "weights": ("sample_weight 0 on a third of the rows", case_weights),
    "weights_negative": ("a negative sample_weight", case_weights_negative),
}


SWEEP_BUDGETS = {
    "sgmcmc": dict(n_chains=4, n_burnin=600, n_samples=10, thinning=20, min_epochs=0),
    "mh": dict(n_chains=4, n_burnin=300, n_samples=20, thinning=5),
    "vi": dict(n_iter=1500, n_samples=30),
    "ensemble": dict(n_iter=1500, min_epochs=0),
}


def sweep(out: Path) -> None:
    """The measurements behind ``SCALE_HIGH``, ``SCALE_LOW`` (:mod:`skfbnn.diagnostics.scale`)
    and ``CHANCE_SE`` (:mod:`skfbnn.diagnostics.health`), written to ``out`` as Markdown
    tables."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] + 0.1 * rng.normal(size=400)
    Xa, Xb, ya, yb = X[:200], X[200:], y[:200], y[200:]

    def run(cls, Xa, ya, Xb, yb, **kwargs):
        est = cls(random_state=0, device="cpu",
                  **{**SWEEP_BUDGETS[METHODS[cls._method].family], **kwargs})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                est.fit(Xa, ya)
            except Exception as err:  # noqa: BLE001
                return f"{type(err).__name__}"
        if is_classifier(cls):
            return f"{quality(est, Xa, ya):.3f}"
        rmse = np.sqrt(np.mean((est.predict(Xb) - yb) ** 2)) / yb.std()
        return f"{quality(est, Xa, ya):.2f} / {rmse:.3g}"

    regressors = [skfbnn.SGLDRegressor, skfbnn.BBBRegressor, skfbnn.PCNRegressor,
                  skfbnn.DeepEnsembleRegressor]
    lines = ["Training R^2 / test RMSE in standard deviations of y (`python "
             "benchmarks/bad_inputs.py --sweep`).", "",
             "Inputs scaled by a factor (their root mean square is about the factor):", "",
             "| factor | " + " | ".join(c.__name__ for c in regressors) + " |",
             "|---|" + "---|" * len(regressors)]
    for factor in (0.01, 0.03, 0.1, 1, 10, 100, 1e6):
        cells = [run(c, factor * Xa, ya, factor * Xb, yb) for c in regressors]
        lines.append(f"| {factor:g} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    lines += ["", f"Targets scaled by a factor, `normalize_y=False` (sd(y) = "
              f"{ya.std():.2f} times the factor):", "",
              "| factor | " + " | ".join(c.__name__ for c in regressors) + " |",
              "|---|" + "---|" * len(regressors)]
    for factor in (0.01, 0.1, 1, 10, 100):
        cells = [run(c, Xa, factor * ya, Xb, factor * yb, normalize_y=False)
                 for c in regressors]
        lines.append(f"| {factor:g} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    labels_a, labels_b = (ya > np.median(ya)).astype(int), (yb > np.median(ya)).astype(int)
    classifiers = [skfbnn.FBNNClassifier, skfbnn.IFBNNClassifier]
    lines += ["", "Training accuracy of classifiers (balanced labels: chance is 0.5) at a "
              "multiple of their default learning rate:", "",
              "| multiple | " + " | ".join(c.__name__ for c in classifiers) + " |",
              "|---|" + "---|" * len(classifiers)]
    for multiple in (1, 100, 1000):
        cells = [run(c, Xa, labels_a, Xb, labels_b,
                     learning_rate=multiple * c().get_params()["learning_rate"])
                 for c in classifiers]
        lines.append(f"| {multiple:g} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", nargs="*", default=None, help="registry keys")
    parser.add_argument("--cases", nargs="*", default=None, choices=sorted(CASES))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--sweep", action="store_true",
                        help="measure the thresholds of the scale and chance checks")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.sweep:
        sweep(args.out)
        return
    methods = [m for m, spec in METHODS.items() if spec.estimator is not None
               and (args.methods is None or m in args.methods)]
    cases = args.cases or list(CASES)
    X, y, labels = data()
    rows, start = [], time.perf_counter()
    for method in methods:
        family = FAMILIES[METHODS[method].family]
        for cls in estimator_pair(method):
            target = labels if is_classifier(cls) else y
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = make(cls).fit(X, target)
            clean = (fitted, quality(fitted, X, target))
            for key in cases:
                t = time.perf_counter()
                outcome, note = CASES[key][1](cls, X, target, clean)
                rows.append({"family": family, "estimator": cls.__name__, "case": key,
                             "outcome": outcome, "seconds": f"{time.perf_counter() - t:.2f}",
                             "note": " ".join(note.split())})
                print(f"{cls.__name__:28s} {key:16s} {outcome:15s} {note[:90]}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "records.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (args.out / "table.md").write_text(table(rows, cases))
    print(f"{len(rows)} cases in {time.perf_counter() - start:.0f} s; "
          f"{sum(r['outcome'] == 'SILENT' for r in rows)} silent", flush=True)


def table(rows, cases) -> str:
    """Outcomes by case and family: the outcome when all of the family's estimators agree,
    else each outcome with its count."""
    cells = defaultdict(Counter)
    for r in rows:
        if r["outcome"] != "n/a":
            cells[r["case"], r["family"]][r["outcome"]] += 1
    families = [f for f in FAMILIES.values() if any(r["family"] == f for r in rows)]
    lines = ["| case | " + " | ".join(families) + " |",
             "|---|" + "---|" * len(families)]
    for key in cases:
        out = []
        for family in families:
            counts = cells.get((key, family))
            if not counts:
                out.append("n/a")
            elif len(counts) == 1:
                out.append(next(iter(counts)))
            else:
                out.append(", ".join(f"{o} {n}" for o, n in counts.most_common()))
        lines.append(f"| {CASES[key][0]} | " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
