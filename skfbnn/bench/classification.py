"""Classification with out-of-distribution (OOD) detection and input shift.

Protocol (a), OOD: train on the classes ``id_classes`` (default 0-4), test
in-distribution on held-out rows of those classes and out-of-distribution on
rows of the other classes (5-9). MNIST-1D keeps its canonical train/test split
(the train rows of classes 0-4 for training, its test rows for both tests) and
repetition ``k`` refits with ``random_state = seed + k``; scikit-learn's digits
(8x8 images) draws a stratified 75/25 split of the classes 0-4 with
``random_state = k`` for repetition ``k`` and uses every image of classes 5-9 as
the OOD set. Inputs are standardised with the training rows' statistics inside
the pipeline. With all ten classes in distribution (``id_classes`` 0-9) there are no OOD
rows and no shift rows: one record per cell, the in-distribution metrics
(:mod:`skfbnn.bench.classdata`).

``network="cnn"`` fits every skfbnn classifier on the package's CNN for the data set and
adds the baseline of five plain CNNs (:mod:`skfbnn.bench.classifiers`).

Protocol (b), shift: the in-distribution test rows under Gaussian noise (standard
deviation ``strength`` times each feature's training standard deviation), with
a fraction ``strength`` of each row's positions shuffled among themselves, and
flipped (MNIST-1D: the signal reversed; digits: each image mirrored left-right).

Metrics per (method, data set, repetition, shift): accuracy, log loss, Brier score
(summed over classes), top-label ECE with 15 equal-width bins, and the AUROC of
telling the OOD rows (for a shift row: the shifted rows) from the clean
in-distribution rows by the predictive entropy (``auroc_entropy``) and by the
mutual information between label and draw (``auroc_mi``, where the model has
posterior draws or members; NaN otherwise).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..metrics import (
    brier_score,
    expected_calibration_error,
    mutual_information,
    ood_auroc,
    predictive_entropy,
    reliability_curve,
)
from .classdata import ALL_CLASSES, DATASETS, N_CLASSES, check_id_classes, ood_data
from .classifiers import (
    BASELINES,
    CNN_BASELINES,
    baseline_params,
    make_classifier,
    network_spec,
)
from .settings import SETTINGS, format_params
from .tables import format_cell, format_summary, summarize
from .tasks import Task, bayes_params, check_param_values, check_params_used, select_params

__all__ = ["ClassificationTask", "draw_probabilities", "apply_shift", "classification_metrics",
           "ECE_BINS", "SHIFTS", "summary_markdown", "ood_data", "check_id_classes",
           "ALL_CLASSES", "N_CLASSES"]

ECE_BINS = 15
"""Equal-width confidence bins of the ECE and the reliability diagrams."""
HIST_BINS = 30
"""Bins of the entropy and mutual-information histograms, over ``[0, log K]``."""
SHIFTS = {"noise": (0.25, 0.5, 1.0, 2.0), "shuffle": (0.25, 0.5, 1.0), "flip": (1.0,)}
"""Default shift settings: kind -> strengths."""
METRICS = ("accuracy", "log_loss", "brier", "ece", "auroc_entropy", "auroc_mi",
           "entropy_in", "entropy_out", "fit_time")


def draw_probabilities(pipeline, X) -> np.ndarray | None:
    """Per-draw (or per-member) class probabilities ``(S, n, K)`` of a fitted pipeline:
    its last step's ``predict_proba_draws`` (every skfbnn classifier, and
    :class:`MLPEnsembleClassifier`), or None for a model without draws (a plain
    ``MLPClassifier``)."""
    model, Xt = pipeline[-1], pipeline[:-1].transform(X)
    if not hasattr(model, "predict_proba_draws"):
        return None
    return np.asarray(model.predict_proba_draws(Xt), dtype=np.float64)


# ----------------------------------------------------------------- shift
def apply_shift(X: np.ndarray, kind: str, strength: float, rng: np.random.Generator,
                scale: np.ndarray, flip=None) -> np.ndarray:
    """``X`` under a shift.

    ``"noise"``: plus Gaussian noise of standard deviation ``strength * scale``
    (per feature); ``"shuffle"``: in every row a random ``strength`` fraction of
    the positions (rounded) permuted among themselves; ``"flip"``: ``flip(X)``
    (default: the columns reversed).

    Examples
    --------
    >>> X = np.arange(6.0).reshape(1, 6)
    >>> apply_shift(X, "flip", 1.0, np.random.default_rng(0), np.ones(6)).tolist()
    [[5.0, 4.0, 3.0, 2.0, 1.0, 0.0]]
    >>> sorted(apply_shift(X, "shuffle", 1.0, np.random.default_rng(0), np.ones(6))[0].tolist())
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    if kind == "noise":
        return X + strength * scale * rng.standard_normal(X.shape)
    if kind == "flip":
        return (flip or (lambda A: A[:, ::-1]))(X).copy()
    if kind == "shuffle":
        if not 0 <= strength <= 1:
            raise ValueError(f"shuffle strength must lie in [0, 1]. Got {strength!r}.")
        out = X.copy()
        m = int(round(strength * X.shape[1]))
        for row in out:
            pos = rng.choice(X.shape[1], size=m, replace=False)
            row[pos] = row[rng.permutation(pos)]
        return out
    raise ValueError(f"shift must be one of {sorted(SHIFTS)}. Got {kind!r}.")


# ----------------------------------------------------------------- metrics
def classification_metrics(y: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """Accuracy, log loss, Brier score and ECE (15 bins) of probabilities ``proba``
    against labels ``y`` given as column indices."""
    from sklearn.metrics import log_loss

    return {
        "accuracy": float(np.mean(proba.argmax(axis=1) == y)),
        "log_loss": float(log_loss(y, proba, labels=np.arange(proba.shape[1]))),
        "brier": brier_score(y, proba),
        "ece": expected_calibration_error(y, proba, n_bins=ECE_BINS),
    }


def _scores(pipe, X) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Mean probabilities, predictive entropy and mutual information (or None)."""
    proba = pipe.predict_proba(X)
    draws = draw_probabilities(pipe, X)
    return proba, predictive_entropy(proba), None if draws is None else mutual_information(draws)


def _detection(ent_in, mi_in, ent_out, mi_out) -> dict[str, float]:
    return {
        "auroc_entropy": ood_auroc(ent_in, ent_out),
        "auroc_mi": np.nan if mi_in is None else ood_auroc(mi_in, mi_out),
        "entropy_in": float(np.mean(ent_in)),
        "entropy_out": float(np.mean(ent_out)),
    }


def _histogram(kind: str, values: np.ndarray, n_classes: int) -> list[dict]:
    edges = np.linspace(0.0, np.log(n_classes), HIST_BINS + 1)
    counts = np.histogram(np.clip(values, 0.0, edges[-1]), bins=edges)[0]
    return [{"kind": kind, "bin": b, "lo": edges[b], "hi": edges[b + 1], "count": int(c),
             "accuracy": np.nan, "confidence": np.nan} for b, c in enumerate(counts)]


def _check_shifts(shifts: dict) -> None:
    for kind, strengths in shifts.items():
        if kind not in SHIFTS:
            raise ValueError(f"shift must be one of {sorted(SHIFTS)}. Got {kind!r}.")
        for s in strengths:
            if not (np.isfinite(s) and s >= 0 and (kind != "shuffle" or s <= 1)):
                limits = "in [0, 1]" if kind == "shuffle" else "finite and >= 0"
                raise ValueError(f"{kind} strengths must be {limits}. Got {s!r}.")


class ClassificationTask(Task):
    """The OOD and shift protocols on MNIST-1D and digits, or plain cross-validation
    of a classifier on a CSV file (``data``), for registry methods and the
    scikit-learn baselines."""

    name = "classification"
    key_columns = ("task", "dataset", "method", "split", *SETTINGS["classification"])
    details = ("bins",)

    def __init__(self, datasets: Sequence[str], methods: Sequence[str], *, data_home=None,
                 n_splits: int | None = None, seed: int = 0, device: str = "auto",
                 params: dict | None = None, shifts: dict | None = None,
                 id_classes: Sequence[int] = tuple(range(5)), data: dict | None = None,
                 source: str = "builtin", network: str = "mlp"):
        self.datasets = list(datasets)
        self.methods = list(methods)
        self.data_home = data_home
        self.n_splits = 5 if n_splits is None else n_splits
        self.seed = seed
        self.device = device
        self.params = dict(params or {})
        self.shifts = dict(SHIFTS if shifts is None else shifts)
        self.id_classes = tuple(int(c) for c in id_classes)
        self._data = dict(data or {})  # CSV: name -> (X, y, splits); no OOD rows
        self.network = network
        for d in self.datasets:
            if d not in DATASETS and d not in self._data:
                raise ValueError(f"dataset must be one of {DATASETS}. Got {d!r}.")
            network_spec(network, d)  # a data set without a CNN: refused here
        if network != "cnn" and any(m in CNN_BASELINES for m in self.methods):
            raise ValueError(f"{', '.join(CNN_BASELINES)} is a baseline of the CNN only; "
                             "add --network cnn.")
        if not (isinstance(self.n_splits, int) and self.n_splits >= 1):
            raise ValueError(f"n_splits must be a positive int. Got {n_splits!r}.")
        _check_shifts(self.shifts)
        if any(d not in self._data for d in self.datasets):
            check_id_classes(self.id_classes)
        self._source = source if self._data else "builtin"
        self._valid = {m: (baseline_params(m) if m in BASELINES
                           else bayes_params(m, "classification")) for m in self.methods}
        check_params_used(self.params, self.methods, self._valid)
        checked = {"ensemble" if m in CNN_BASELINES else m for m in self.methods}
        check_param_values(self.params, sorted(checked - set(BASELINES)), "classification")
        for m in self.methods:
            if m == "mlp":  # scikit-learn's own constraints, before any fit
                params = select_params(m, self.params, self._valid[m])
                try:
                    make_classifier(m, **params)[-1]._validate_params()
                except (ValueError, TypeError) as exc:
                    raise ValueError(f"--set ({m}): {exc}") from None

    def settings(self, dataset: str, method: str) -> dict:
        """The setting columns of the cells of ``method`` on ``dataset``."""
        csv = dataset in self._data
        shifts = ";".join(f"{k}={','.join(f'{v:g}' for v in vs)}"
                          for k, vs in sorted(self.shifts.items()))
        params = select_params(method, self.params, self._valid[method])
        every = csv or self._all_classes
        return {"seed": self.seed,
                "folds": f"{len(self._data[dataset][2])}-fold" if csv else "protocol",
                "data": self._source if csv else "builtin",
                "id_classes": "all" if every else ",".join(map(str, self.id_classes)),
                "shifts": "none" if every or not shifts else shifts,
                "network": self.network, "params": format_params(params)}

    @property
    def _all_classes(self) -> bool:
        return sorted(self.id_classes) == list(ALL_CLASSES)

    def n_records(self, cell: dict) -> int:
        """The clean record, and one per shift setting on the OOD data sets (none when
        every class is in distribution)."""
        if cell["dataset"] in self._data or self._all_classes:
            return 1
        return 1 + sum(len(v) for v in self.shifts.values())

    def _n(self, dataset: str) -> int:
        if dataset in self._data:
            return len(self._data[dataset][2])
        return self.n_splits

    def cells(self) -> list[dict]:
        return [{"task": self.name, "dataset": d, "method": m, "split": k,
                 **self.settings(d, m)}
                for d in self.datasets for m in self.methods for k in range(self._n(d))]

    def _rows(self, cell: dict) -> dict:
        if cell["dataset"] in self._data:
            X, y, splits = self._data[cell["dataset"]]
            train, test = splits[cell["split"]]
            return dict(X_train=X[train], y_train=y[train], X_in=X[test], y_in=y[test],
                        X_out=None, flip=None)
        return ood_data(cell["dataset"], cell["split"], data_home=self.data_home,
                        id_classes=self.id_classes)

    def run_cell(self, cell: dict) -> dict[str, list[dict]]:
        data = self._rows(cell)
        method, k = cell["method"], cell["split"]
        params = select_params(method, self.params, self._valid[method])
        network = {} if cell["dataset"] in self._data else network_spec(
            self.network, cell["dataset"])
        pipe = make_classifier(method, random_state=self.seed + k, device=self.device,
                               network=network, **params)
        start = time.perf_counter()
        pipe.fit(data["X_train"], data["y_train"])
        fit_time = time.perf_counter() - start
        classes = pipe.classes_
        y_in = np.searchsorted(classes, data["y_in"])
        if not np.array_equal(classes[np.minimum(y_in, len(classes) - 1)], data["y_in"]):
            raise ValueError("the test rows hold classes the training rows do not.")
        proba, ent_in, mi_in = _scores(pipe, data["X_in"])
        base = {**cell, "shift": "none", "strength": 0.0}
        nan = dict.fromkeys(("auroc_entropy", "auroc_mi"), np.nan)
        detect = {**nan, "entropy_in": float(np.mean(ent_in)), "entropy_out": np.nan}
        bins = self._bins(cell, y_in, proba, ent_in, mi_in, len(classes))
        if data["X_out"] is not None:
            _, ent_out, mi_out = _scores(pipe, data["X_out"])
            detect = _detection(ent_in, mi_in, ent_out, mi_out)
            bins += [{**cell, **b} for b in _histogram("entropy_out", ent_out, len(classes))]
            if mi_out is not None:
                bins += [{**cell, **b} for b in _histogram("mi_out", mi_out, len(classes))]
        records = [{**base, **classification_metrics(y_in, proba), **detect,
                    "fit_time": fit_time}]
        if data["X_out"] is not None:
            records += self._shifted(cell, pipe, data, y_in, ent_in, mi_in, fit_time)
        return {"records": records, "bins": bins}

    def _bins(self, cell, y, proba, ent, mi, n_classes) -> list[dict]:
        counts, acc, conf = reliability_curve(y, proba, n_bins=ECE_BINS)
        edges = np.linspace(0, 1, ECE_BINS + 1)
        rows = [{"kind": "reliability", "bin": b, "lo": edges[b], "hi": edges[b + 1],
                 "count": int(counts[b]), "accuracy": acc[b], "confidence": conf[b]}
                for b in range(ECE_BINS)]
        rows += _histogram("entropy_in", ent, n_classes)
        if mi is not None:
            rows += _histogram("mi_in", mi, n_classes)
        return [{**cell, **r} for r in rows]

    def _shifted(self, cell, pipe, data, y_in, ent_in, mi_in, fit_time) -> list[dict]:
        scale = data["X_train"].std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)
        records = []
        for j, (kind, strengths) in enumerate(sorted(self.shifts.items())):
            for i, strength in enumerate(strengths):
                rng = np.random.default_rng([self.seed, cell["split"], j, i])
                X = apply_shift(data["X_in"], kind, float(strength), rng, scale,
                                flip=data["flip"])
                proba, ent, mi = _scores(pipe, X)
                records.append({**cell, "shift": kind, "strength": float(strength),
                                **classification_metrics(y_in, proba),
                                **_detection(ent_in, mi_in, ent, mi), "fit_time": fit_time})
        return records

    def progress(self, cell: dict, records: list[dict]) -> str:
        r = records[0]
        return (f"classification {r['dataset']} {r['method']} split {r['split']}: "
                f"accuracy {r['accuracy']:.3f} log_loss {r['log_loss']:.3f} "
                f"ece {r['ece']:.3f} auroc {r['auroc_entropy']:.3f} / mi {r['auroc_mi']:.3f} "
                f"fit {r['fit_time']:.1f}s")


# ----------------------------------------------------------------- summary
def _setting(r: dict) -> str:
    return "clean" if r["shift"] == "none" else f"{r['shift']} {r['strength']:g}"


def summary_markdown(records: Sequence[dict], order: Sequence[str] = ()) -> str:
    """The OOD table (clean rows) and, where there are shift rows, accuracy and ECE per
    shift setting; mean ± standard error over repetitions."""

    clean = [r for r in records if r["shift"] == "none"]
    columns = ("accuracy", "log_loss", "brier", "ece", "auroc_entropy", "auroc_mi",
               "fit_time")
    parts = [format_summary(summarize(clean, ("dataset", "method"), columns),
                            ("dataset", "method"), columns, count="splits",
                            order=order)]
    shifted = [r for r in records if r["shift"] != "none"]
    if shifted:
        records = [{**r, "setting": _setting(r)} for r in records]
        settings = list(dict.fromkeys(_setting(r) for r in sorted(
            records, key=lambda r: (r["shift"] != "none", r["shift"], r["strength"]))))
        for metric in ("accuracy", "ece"):
            for dataset in sorted({r["dataset"] for r in shifted}):
                rows = [r for r in records if r["dataset"] == dataset]
                summary = summarize(rows, ("method", "setting"), (metric,))
                methods = sorted({m for m, _ in summary},
                                 key=lambda m: (list(order).index(m) if m in order
                                                else len(order), m))
                lines = [f"{metric} under shift, {dataset}:", "",
                         "| method | " + " | ".join(settings) + " |",
                         "|" + "---|" * (len(settings) + 1)]
                for m in methods:
                    cells = [format_cell(*summary[(m, s)][metric][:2])
                             if (m, s) in summary else "n/a" for s in settings]
                    lines.append(f"| {m} | " + " | ".join(cells) + " |")
                parts.append("\n".join(lines))
    return "\n\n".join(parts)
