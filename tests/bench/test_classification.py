"""Tests for the classification / OOD / shift task (skfbnn.bench.classification)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from skfbnn.bench.classification import (
    ClassificationTask,
    apply_shift,
    classification_metrics,
    draw_probabilities,
    ood_data,
)
from skfbnn.bench.classifiers import MLPEnsembleClassifier, make_classifier
from skfbnn.metrics import mutual_information, predictive_entropy
from tests.conftest import FAST, SHARED_DATA


def test_classification_metrics_by_hand():
    proba = np.array([[0.8, 0.2], [0.4, 0.6], [0.7, 0.3]])
    y = np.array([0, 0, 1])
    m = classification_metrics(y, proba)
    assert m["accuracy"] == pytest.approx(1 / 3)
    assert m["log_loss"] == pytest.approx(-(np.log(0.8) + np.log(0.4) + np.log(0.3)) / 3)
    assert m["log_loss"] == pytest.approx(log_loss(y, proba))
    brier = ((0.2**2 + 0.2**2) + (0.6**2 + 0.6**2) + (0.7**2 + 0.7**2)) / 3
    assert m["brier"] == pytest.approx(brier)
    # 15 bins: 0.8 -> bin 12 (correct), 0.6 -> bin 9 (wrong), 0.7 -> bin 10 (wrong)
    assert m["ece"] == pytest.approx((0.2 + 0.6 + 0.7) / 3)


def test_apply_shift_kinds():
    rng = np.random.default_rng(0)
    X = np.tile(np.arange(8.0), (2000, 1))
    scale = np.full(8, 2.0)
    noisy = apply_shift(X, "noise", 0.5, rng, scale)
    assert np.std(noisy - X) == pytest.approx(1.0, rel=0.03)  # 0.5 x scale 2
    shuffled = apply_shift(X[:50], "shuffle", 0.5, rng, scale)
    assert np.all(np.sort(shuffled, axis=1) == X[:50])  # a permutation of each row
    moved = (shuffled != X[:50]).sum(axis=1)
    assert moved.max() <= 4 and moved.mean() > 2  # only the 4 chosen positions move
    assert np.array_equal(apply_shift(X, "shuffle", 0.0, rng, scale), X)
    image = np.arange(16.0).reshape(1, 16)
    mirror = lambda A: A.reshape(-1, 4, 4)[:, :, ::-1].reshape(A.shape)  # noqa: E731
    assert apply_shift(image, "flip", 1.0, rng, scale, flip=mirror)[0, :4].tolist() == [
        3, 2, 1, 0]
    with pytest.raises(ValueError, match="shift must be one of"):
        apply_shift(X, "rotate", 1.0, rng, scale)


def test_digits_ood_protocol():
    a = ood_data("digits", 0)
    assert set(np.unique(a["y_train"])) == set(range(5)) == set(np.unique(a["y_in"]))
    assert len(a["X_out"]) == 1797 - len(a["y_train"]) - len(a["y_in"])
    assert len(a["y_in"]) == pytest.approx(0.25 * (len(a["y_train"]) + len(a["y_in"])), abs=1)
    b = ood_data("digits", 1)
    assert not np.array_equal(a["y_in"], b["y_in"])  # repetition k: another split
    flipped = a["flip"](a["X_in"][:1])
    assert np.array_equal(flipped.reshape(8, 8), a["X_in"][0].reshape(8, 8)[:, ::-1])


@pytest.mark.skipif(not (SHARED_DATA / "mnist1d").is_dir(), reason="MNIST-1D not found")
def test_mnist1d_ood_protocol():
    d = ood_data("mnist1d", 3, data_home=SHARED_DATA)
    assert d["X_train"].shape[1] == 40 and set(np.unique(d["y_train"])) == set(range(5))
    assert len(d["X_in"]) + len(d["X_out"]) == 1000  # the canonical test rows
    assert np.array_equal(ood_data("mnist1d", 0, data_home=SHARED_DATA)["y_in"], d["y_in"])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_draw_probabilities_of_each_kind():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    ens = make_classifier("mlp_ensemble", n_estimators=3, max_iter=50).fit(X, y)
    draws = draw_probabilities(ens, X[:5])
    assert draws.shape == (3, 5, 3)
    np.testing.assert_allclose(draws.mean(0), ens.predict_proba(X[:5]))
    assert draw_probabilities(make_classifier("mlp", max_iter=50).fit(X, y), X) is None
    sgld = make_classifier("sgld", device="cpu", **FAST).fit(X, y)
    draws = draw_probabilities(sgld, X[:5])
    assert draws.shape == (FAST["n_chains"] * FAST["n_samples"], 5, 3)
    np.testing.assert_allclose(draws.mean(0), sgld.predict_proba(X[:5]), atol=1e-6)


def test_mlp_ensemble_members_differ_and_seed_is_respected():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 2, 60)
    a = MLPEnsembleClassifier(n_estimators=2, max_iter=30, random_state=4).fit(X, y)
    b = MLPEnsembleClassifier(n_estimators=2, max_iter=30, random_state=4).fit(X, y)
    assert [m.random_state for m in a.estimators_] == [8, 9]
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    members = a.predict_proba_draws(X)
    assert not np.allclose(members[0], members[1])
    with pytest.raises(ValueError, match="n_estimators"):
        MLPEnsembleClassifier(n_estimators=0).fit(X, y)


def test_task_cell_records_match_a_direct_computation():
    shifts = {"noise": (0.5,), "flip": (1.0,)}
    task = ClassificationTask(["digits"], ["mlp_ensemble"], n_splits=1, seed=2, shifts=shifts,
                              params={"n_estimators": 2, "max_iter": 20,
                                      "hidden_layer_sizes": (8,)})
    out = task.run_cell(task.cells()[0])
    records = out["records"]
    assert [(r["shift"], r["strength"]) for r in records] == [
        ("none", 0.0), ("flip", 1.0), ("noise", 0.5)]
    # the same model by hand: seed + split = 2
    data = ood_data("digits", 0)
    pipe = make_classifier("mlp_ensemble", random_state=2, n_estimators=2, max_iter=20,
                           hidden_layer_sizes=(8,))
    pipe.fit(data["X_train"], data["y_train"])
    p_in, p_out = pipe.predict_proba(data["X_in"]), pipe.predict_proba(data["X_out"])
    ent_in, ent_out = predictive_entropy(p_in), predictive_entropy(p_out)
    labels = np.r_[np.zeros(len(ent_in)), np.ones(len(ent_out))]
    clean = records[0]
    assert clean["accuracy"] == pytest.approx(np.mean(p_in.argmax(1) == data["y_in"]))
    assert clean["auroc_entropy"] == pytest.approx(roc_auc_score(labels, np.r_[ent_in, ent_out]))
    mi_in = mutual_information(draw_probabilities(pipe, data["X_in"]))
    mi_out = mutual_information(draw_probabilities(pipe, data["X_out"]))
    assert clean["auroc_mi"] == pytest.approx(roc_auc_score(labels, np.r_[mi_in, mi_out]))
    flip = records[1]
    p_flip = pipe.predict_proba(data["flip"](data["X_in"]))
    assert flip["accuracy"] == pytest.approx(np.mean(p_flip.argmax(1) == data["y_in"]))
    kinds = {b["kind"] for b in out["bins"]}
    assert kinds == {"reliability", "entropy_in", "entropy_out", "mi_in", "mi_out"}
    reliability = [b for b in out["bins"] if b["kind"] == "reliability"]
    assert len(reliability) == 15 and sum(b["count"] for b in reliability) == len(data["y_in"])


def test_task_validates_its_arguments():
    with pytest.raises(ValueError, match="dataset must be one of"):
        ClassificationTask(["cifar"], ["mlp"])
    with pytest.raises(ValueError, match="no parameter 'n_burnin' in mlp"):
        ClassificationTask(["digits"], ["mlp"], params={"n_burnin": 3})
    with pytest.raises(ValueError, match="method must be one of"):
        make_classifier("svm")


# ------------------------------------------------------------- networks and all ten classes
def test_network_spec_gives_the_package_cnns():
    from skfbnn.bench.classifiers import network_spec
    from skfbnn.nn import CNN1d, CNN2d

    assert network_spec("cnn", "mnist1d") == {"network": CNN1d, "input_shape": (1, 40)}
    assert network_spec("cnn", "digits") == {"network": CNN2d, "input_shape": (1, 8, 8)}
    assert network_spec("mlp", "mnist1d") == {}
    with pytest.raises(ValueError, match="network must be one of"):
        network_spec("rnn", "digits")
    with pytest.raises(ValueError, match="has a CNN for"):
        network_spec("cnn", "wine")


def test_cnn_ensemble_is_the_ensemble_trainer_by_maximum_likelihood():
    from skfbnn.bench.classifiers import network_spec
    from skfbnn.nn import CNN2d

    cnn = network_spec("cnn", "digits")
    plain = make_classifier("cnn_ensemble", random_state=3, network=cnn)[-1]
    bayes = make_classifier("ensemble", random_state=3, network=cnn)[-1]
    assert plain.method == bayes.method == "ensemble"
    assert plain.method_params == {"prior_std": None, "n_estimators": 5}
    assert bayes.method_params is None  # the classifier's default prior_std=3
    assert plain.network is CNN2d and plain.input_shape == (1, 8, 8)
    assert make_classifier("cnn_ensemble", network=cnn, n_iter=7)[-1].method_params == {
        "prior_std": None, "n_estimators": 5, "n_iter": 7}
    # the MLP baselines ignore the network; cnn_ensemble needs one
    assert make_classifier("mlp", network=cnn)[-1].hidden_layer_sizes == (50,)
    with pytest.raises(ValueError, match="network='cnn' only"):
        make_classifier("cnn_ensemble")


def test_all_ten_classes_have_no_ood_rows():
    d = ood_data("digits", 0, id_classes=range(10))
    assert d["X_out"] is None and set(np.unique(d["y_train"])) == set(range(10))
    assert len(d["y_train"]) + len(d["y_in"]) == 1797
    assert len(d["y_in"]) == pytest.approx(0.25 * 1797, abs=1)


@pytest.mark.skipif(not (SHARED_DATA / "mnist1d").is_dir(), reason="MNIST-1D not found")
def test_mnist1d_all_classes_is_the_canonical_split():
    d = ood_data("mnist1d", 0, data_home=SHARED_DATA, id_classes=range(10))
    assert d["X_out"] is None
    assert d["X_train"].shape == (4000, 40) and d["X_in"].shape == (1000, 40)
    assert set(np.unique(d["y_in"])) == set(range(10))


def test_cnn_task_on_all_classes_fits_the_cnn_and_records_its_setting():
    task = ClassificationTask(["digits"], ["sgld", "cnn_ensemble"], n_splits=1,
                              id_classes=range(10), network="cnn", device="cpu",
                              params={**FAST, "sgld.n_burnin": 10, "n_iter": 10})
    cells = task.cells()
    assert [c["method"] for c in cells] == ["sgld", "cnn_ensemble"]
    for c in cells:
        assert (c["network"], c["id_classes"], c["shifts"]) == ("cnn", "all", "none")
        assert task.n_records(c) == 1
    out = task.run_cell(cells[1])
    (record,) = out["records"]  # in-distribution metrics only
    assert record["shift"] == "none" and np.isnan(record["auroc_entropy"])
    assert 0 <= record["accuracy"] <= 1 and record["log_loss"] > 0
    assert not {b["kind"] for b in out["bins"]} & {"entropy_out", "mi_out"}
    # the same fit by hand: the ensemble trainer on CNN2d, no weight prior
    from skfbnn.bench.classifiers import network_spec

    data = ood_data("digits", 0, id_classes=range(10))
    pipe = make_classifier("cnn_ensemble", random_state=0, device="cpu",
                           network=network_spec("cnn", "digits"), n_iter=10, min_epochs=0)
    pipe.fit(data["X_train"], data["y_train"])
    assert type(pipe[-1].network_).__name__ == "CNN2d"
    proba = pipe.predict_proba(data["X_in"])
    assert record["log_loss"] == pytest.approx(log_loss(data["y_in"], proba), rel=1e-6)
    mlp = ClassificationTask(["digits"], ["sgld"], n_splits=1, id_classes=range(10))
    assert mlp.cells()[0]["network"] == "mlp"
    assert task.key(cells[0]) != mlp.key(mlp.cells()[0])  # never the same cell


def test_cnn_options_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="baseline of the CNN only"):
        ClassificationTask(["digits"], ["cnn_ensemble"])
    with pytest.raises(ValueError, match="network must be one of"):
        ClassificationTask(["digits"], ["sgld"], network="resnet")
    with pytest.raises(ValueError, match="no parameter 'n_burnin' in cnn_ensemble"):
        ClassificationTask(["digits"], ["cnn_ensemble"], network="cnn",
                           params={"n_burnin": 3})
    with pytest.raises(ValueError, match="'n_iter' parameter"):
        ClassificationTask(["digits"], ["cnn_ensemble"], network="cnn", params={"n_iter": -1})


def test_records_without_a_network_column_read_as_mlp():
    from skfbnn.bench.settings import deduplicate, setting_groups

    old = {"dataset": "digits", "method": "sgld", "split": 0, "shift": "none",
           "strength": 0.0, "seed": 0, "accuracy": 0.5}
    new = {**old, "network": "mlp", "accuracy": 0.6}
    cnn = {**old, "network": "cnn", "accuracy": 0.7}
    assert [len(g) for _, g in setting_groups("classification", [old, new])] == [2]
    assert deduplicate("classification", [old, new]) == ([new], 1)  # the same cell
    groups = setting_groups("classification", [old, new, cnn])
    assert [(label, len(g)) for label, g in groups] == [("network=cnn", 1),
                                                        ("network=mlp", 2)]
