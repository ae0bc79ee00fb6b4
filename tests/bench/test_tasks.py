"""Tests for the task loop (resumption, side files, progress), parameter routing and CSV
loading in skfbnn.bench.tasks."""

from __future__ import annotations

import io

import numpy as np
import pytest

from skfbnn.bench.report import append_records, detail_path, read_records
from skfbnn.bench.tasks import Task, check_params_used, load_csv, run_task, select_params


class ToyTask(Task):
    """Cells (method, split); a cell's record is a function of the cell alone."""

    name = "toy"
    key_columns = ("task", "dataset", "method", "split")
    details = ("bins",)

    def __init__(self, methods=("a", "b"), n=3):
        self.methods, self.n, self.ran = list(methods), n, []

    def cells(self):
        return [{"task": "toy", "dataset": "d", "method": m, "split": k}
                for m in self.methods for k in range(self.n)]

    def run_cell(self, cell):
        self.ran.append((cell["method"], cell["split"]))
        value = 10 * len(cell["method"]) + cell["split"] + (0.5 if cell["method"] == "b" else 0)
        return {"records": [{**cell, "x": value}],
                "bins": [{**cell, "bin": i, "count": i * value} for i in range(2)]}

    def progress(self, cell, records):
        return f"{cell['method']} split {cell['split']}: x {records[0]['x']}"


def test_run_task_writes_records_side_files_and_progress(tmp_path):
    out, log = tmp_path / "r.csv", io.StringIO()
    task = ToyTask()
    records = run_task(task, out, log=log)
    assert [(r["method"], r["split"], r["x"]) for r in records] == [
        ("a", 0.0, 10.0), ("a", 1.0, 11.0), ("a", 2.0, 12.0),
        ("b", 0.0, 10.5), ("b", 1.0, 11.5), ("b", 2.0, 12.5)]
    bins = read_records([detail_path(out, "bins")])
    assert len(bins) == 12 and bins[-1]["count"] == 12.5
    lines = log.getvalue().splitlines()
    assert lines[0] == "[1/6] a split 0: x 10" and lines[-1] == "[6/6] b split 2: x 12.5"


def test_run_task_resumes_and_skips_finished_cells(tmp_path):
    out = tmp_path / "r.csv"
    run_task(ToyTask(methods=("a",)), out, log=io.StringIO())
    text = out.read_text()
    task, log = ToyTask(methods=("a", "b")), io.StringIO()
    records = run_task(task, out, log=log)
    assert task.ran == [("b", 0), ("b", 1), ("b", 2)]  # only the new cells ran
    assert out.read_text().startswith(text) and len(records) == 6
    assert "3 of 6 cells already in" in log.getvalue()
    again = ToyTask(methods=("a", "b"))
    run_task(again, out, log=io.StringIO())
    assert again.ran == []  # a full file: nothing runs
    assert len(read_records([out])) == 6
    # a record file cut short after a crash: the missing cell runs again
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:-1]) + "\n")
    last = ToyTask(methods=("a", "b"))
    run_task(last, out, log=io.StringIO())
    assert last.ran == [("b", 2)]


def test_run_task_in_memory_returns_only_fresh_records():
    task = ToyTask(n=1)
    records = run_task(task, None, log=io.StringIO(), counter=False)
    assert [r["x"] for r in records] == [10, 10.5]


def test_append_records_refuses_other_columns(tmp_path):
    path = tmp_path / "r.csv"
    append_records(path, [{"a": 1, "b": 2}])
    append_records(path, [{"b": 4, "a": 3}])  # same columns, other order: file's order kept
    assert path.read_text().splitlines() == ["a,b", "1,2", "3,4"]
    with pytest.raises(ValueError, match="holds records with the columns"):
        append_records(path, [{"a": 1, "c": 2}])


def test_select_and_check_params():
    valid = {"sgld": {"step_size", "n_burnin"}, "bbb": {"n_iter"}}
    params = {"n_burnin": 5, "bbb.n_iter": 9, "n_iter": 7, "sgld.step_size": 0.1}
    assert select_params("sgld", params, valid["sgld"]) == {"n_burnin": 5, "step_size": 0.1}
    # the method's own value wins over the general one
    assert select_params("bbb", params, valid["bbb"]) == {"n_iter": 9}
    check_params_used(params, ["sgld", "bbb"], valid)
    with pytest.raises(ValueError, match="no parameter 'oops'"):
        check_params_used({"oops": 1}, ["sgld", "bbb"], valid)
    with pytest.raises(ValueError, match="not among the methods"):
        check_params_used({"ifbde.n_iter": 1}, ["sgld", "bbb"], valid)
    with pytest.raises(ValueError, match="no parameter 'n_iter' in sgld"):
        check_params_used({"sgld.n_iter": 1}, ["sgld", "bbb"], valid)


def test_load_csv_one_hot_encodes_text_columns(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("size,colour,price\n1.5,red,10\n2,blue,20\n3,red,30\n")
    X, y, names = load_csv(path, "price")
    assert names == ["size", "colour=blue", "colour=red"]
    np.testing.assert_array_equal(X, [[1.5, 0, 1], [2, 1, 0], [3, 0, 1]])
    assert y.tolist() == [10.0, 20.0, 30.0]
    X, y, names = load_csv(path, "colour")
    assert y.tolist() == ["red", "blue", "red"] and names == ["size", "price"]
    with pytest.raises(ValueError, match="target must be a column"):
        load_csv(path, "weight")
    path.write_text("a,b\n1,2\n3\n4,5\n")
    with pytest.raises(ValueError, match="do not have 2 fields"):
        load_csv(path, "a")


# ----------------------------------------------------------------- settings in the key
def _keys(task):
    return {task.key(c) for c in task.cells()}


def test_every_option_that_changes_a_result_changes_the_cells_key():
    from skfbnn.bench.bandit import BanditTask
    from skfbnn.bench.classification import ClassificationTask
    from skfbnn.bench.tasks import RegressionTask

    reg = RegressionTask(["diabetes"], ["sgld"], n_splits=2)
    for other in (RegressionTask(["diabetes"], ["sgld"], n_splits=3),
                  RegressionTask(["diabetes"], ["sgld"], n_splits=2, seed=7),
                  RegressionTask(["diabetes"], ["sgld"], n_splits=2,
                                 params={"n_burnin": 5})):
        assert not _keys(reg) & _keys(other)
    # an override of another method leaves these cells alone
    two = RegressionTask(["diabetes"], ["sgld", "bbb"], n_splits=2, params={"bbb.n_iter": 5})
    assert _keys(reg) < _keys(two)
    clf = ClassificationTask(["digits"], ["mlp"], n_splits=2)
    for other in (ClassificationTask(["digits"], ["mlp"], n_splits=2, id_classes=(0, 1)),
                  ClassificationTask(["digits"], ["mlp"], n_splits=2,
                                     shifts={"noise": (1.0,)}),
                  ClassificationTask(["digits"], ["mlp"], n_splits=2, seed=3),
                  ClassificationTask(["digits"], ["mlp"], n_splits=2, network="cnn"),
                  ClassificationTask(["digits"], ["mlp"], n_splits=2, id_classes=range(10)),
                  ClassificationTask(["digits"], ["mlp"], n_splits=2,
                                     params={"max_iter": 3})):
        assert not _keys(clf) & _keys(other)
    # more repetitions of the same protocol extend the grid
    assert _keys(clf) < _keys(ClassificationTask(["digits"], ["mlp"], n_splits=3))
    assert clf.n_records(clf.cells()[0]) == 1 + 4 + 3 + 1
    ban = BanditTask(["uniform"], n_seeds=1, horizon=64)
    for change in (dict(buffer_size=64), dict(update_every=32), dict(curve_every=32),
                   dict(p=0.4), dict(horizon=128), dict(seed=5)):
        other = BanditTask(["uniform"], **{"n_seeds": 1, "horizon": 64, **change})
        assert not _keys(ban) & _keys(other), change


def test_task_summary_keeps_settings_apart():
    from skfbnn.bench.report import COLUMNS, task_summary

    rows = [{"dataset": "d", "method": "sgld", "split": k, "seed": s, "folds": "2-fold",
             "data": "builtin", "params": "default", **dict.fromkeys(COLUMNS, float(s))}
            for s in (0, 7) for k in (0, 1)]
    text = task_summary("regression", rows)
    assert text.startswith("Records with seed=0:\n\n| dataset |")
    assert "\n\nRecords with seed=7:\n\n| dataset |" in text
    assert "| d | sgld | 2 | 0.000 ± 0.000" in text and "| d | sgld | 2 | 7.000 ± 0.000" in text
    one = task_summary("regression", rows[:2])
    assert one.startswith("| dataset |")  # one setting: the table as before
