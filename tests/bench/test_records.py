"""Tests for the record files (skfbnn.bench.records): partial last lines, corrupt lines,
appends in one write, and a run killed at any byte resumed without losing or doubling
a record (with hypothesis)."""

from __future__ import annotations

import io
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skfbnn.bench.tasks as tasks_module
from skfbnn.bench.records import (
    RecordFileError,
    RecordFileWarning,
    append_records,
    detail_path,
    drop_records,
    read_records,
)
from skfbnn.bench.tasks import Task, run_task


def test_a_partial_last_line_is_dropped_with_a_warning_naming_the_file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a,b\r\n1,2\r\n3,")
    with pytest.warns(RecordFileWarning, match="r.csv.*partial last line"):
        assert read_records([path]) == [{"a": 1.0, "b": 2.0}]
    path.write_text("a,b\r\n1,2\r\n3,4")  # complete fields but no newline: may be cut
    with pytest.warns(RecordFileWarning):
        assert len(read_records([path])) == 1


def test_append_after_a_kill_starts_on_a_line_of_its_own(tmp_path):
    """Appending onto a partial line glued two records into one line of 3 fields; every
    later read failed with a TypeError naming no file."""
    path = tmp_path / "r.csv"
    path.write_text("a,b\r\n1,2\r\n3,")
    with pytest.warns(RecordFileWarning, match="r.csv"):
        append_records(path, [{"a": 5, "b": 6}])
    assert path.read_bytes() == b"a,b\r\n1,2\r\n5,6\r\n"
    path.write_text("a,")  # cut inside the header: the file starts again
    with pytest.warns(RecordFileWarning):
        append_records(path, [{"a": 5, "b": 6}])
    assert read_records([path]) == [{"a": 5.0, "b": 6.0}]


def test_corrupt_files_raise_naming_the_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n3,4,5\n6,7\n")
    with pytest.raises(RecordFileError, match=r"bad.csv': line 3 has 3 fields"):
        read_records([path])
    with pytest.raises(RecordFileError, match="no such record file"):
        read_records([tmp_path / "missing.csv"])
    with pytest.raises(RecordFileError, match="not a file"):
        read_records([tmp_path])
    path.write_bytes(b"a,b\n\xff\xfe,1\n")
    with pytest.raises(RecordFileError, match="not a UTF-8 CSV"):
        read_records([path])
    path.write_text("a,a\n1,2\n")
    with pytest.raises(RecordFileError, match="twice"):
        read_records([path])
    path.write_text("")
    assert read_records([path]) == []


def test_drop_records_rewrites_the_file(tmp_path):
    path = tmp_path / "r.csv"
    append_records(path, [{"k": i, "v": 10 * i} for i in range(4)])
    assert drop_records(path, lambda r: r["k"] in (1.0, 3.0)) == 2
    assert [r["v"] for r in read_records([path])] == [0.0, 20.0]
    assert drop_records(path, lambda r: False) == 0
    assert not path.with_name("r.csv.tmp").exists()


# ----------------------------------------------------------------- killed at any byte
class TwoRecordTask(Task):
    """Cells (method, split) with two records and three side rows each."""

    name = "toy"
    key_columns = ("task", "dataset", "method", "split", "seed")
    details = ("bins",)

    def __init__(self, seed=0, methods=("a", "b"), n=2):
        self.seed, self.methods, self.n, self.ran = seed, list(methods), n, []

    def cells(self):
        return [{"task": "toy", "dataset": "d", "method": m, "split": k, "seed": self.seed}
                for m in self.methods for k in range(self.n)]

    def n_records(self, cell):
        return 2

    def run_cell(self, cell):
        self.ran.append((cell["method"], cell["split"]))
        value = 100 * self.seed + 10 * self.methods.index(cell["method"]) + cell["split"]
        return {"records": [{**cell, "part": p, "x": value + p / 10} for p in range(2)],
                "bins": [{**cell, "bin": i, "count": value * i} for i in range(3)]}


def _writes(folder: Path, monkeypatch) -> tuple[list[tuple[str, int, int]], dict]:
    """Run the grid once, logging every append as (file, start, end); the final bytes."""
    log = []
    real = tasks_module.append_records

    def logged(path, records):
        start = path.stat().st_size if path.exists() else 0
        real(path, records)
        log.append((path.name, start, path.stat().st_size))

    monkeypatch.setattr(tasks_module, "append_records", logged)
    run_task(TwoRecordTask(), folder / "r.csv", log=io.StringIO())
    monkeypatch.setattr(tasks_module, "append_records", real)
    return log, {p.name: p.read_bytes() for p in folder.iterdir()}


def _rows(path: Path) -> list[tuple]:
    return sorted(tuple(sorted(r.items())) for r in read_records([path]))


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("full")
    try:
        log, final = _writes(folder, mp)
    finally:
        mp.undo()
    return log, final, _rows(folder / "r.csv"), _rows(folder / "r.bins.csv")


def _kill_at(folder: Path, log, final, cut: int) -> None:
    """The files as they were when a run writing ``log`` was killed after ``cut`` bytes."""
    sizes: dict[str, int] = {}
    written = 0
    for name, start, end in log:
        take = min(end - start, cut - written)
        if take <= 0:
            break
        sizes[name] = start + take
        written += take
    for name, size in sizes.items():
        (folder / name).write_bytes(final[name][:size])


def _resume_and_check(folder, full_run, cut):
    log, final, want, want_bins = full_run
    _kill_at(folder, log, final, cut)
    task = TwoRecordTask()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordFileWarning)
        records = run_task(task, folder / "r.csv", log=io.StringIO())
    assert _rows(folder / "r.csv") == want  # nothing lost, nothing twice
    assert _rows(folder / "r.bins.csv") == want_bins
    assert len(records) == len(want)


def test_a_kill_between_a_cells_side_rows_and_records_doubles_nothing(tmp_path, full_run):
    """A cell whose side rows were written but not its records ran again and appended its
    side rows a second time."""
    log = full_run[0]
    assert [name for name, _, _ in log] == ["r.bins.csv", "r.csv"] * 4
    after_side_rows = sum(end - start for _, start, end in log[:3])  # cell 2's side rows
    _resume_and_check(tmp_path, full_run, after_side_rows)


def test_a_kill_between_two_records_of_a_cell_reruns_the_cell(tmp_path, full_run):
    log, final = full_run[:2]
    first_line = final["r.csv"].index(b"\n", log[1][1]) + 1  # header
    second = final["r.csv"].index(b"\n", first_line) + 1  # cell 1's first record
    cut = sum(end - start for _, start, end in log[:1]) + second
    _resume_and_check(tmp_path, full_run, cut)


def _any_cut(full_run, data):
    total = sum(end - start for _, start, end in full_run[0])
    cut = data.draw(st.integers(0, total), label="cut")
    with tempfile.TemporaryDirectory() as folder:
        _resume_and_check(Path(folder), full_run, cut)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_run_killed_at_any_byte_resumes_to_the_full_records(full_run, data):
    _any_cut(full_run, data)


@pytest.mark.slow
@settings(max_examples=500, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_run_killed_at_any_byte_resumes_to_the_full_records_long(full_run, data):
    _any_cut(full_run, data)


def test_another_setting_adds_cells_beside_the_old_ones(tmp_path):
    out = tmp_path / "r.csv"
    first = run_task(TwoRecordTask(seed=0), out, log=io.StringIO())
    task = TwoRecordTask(seed=7)
    second = run_task(task, out, log=io.StringIO())
    assert len(task.ran) == 4  # nothing of seed 0 reused
    assert {r["seed"] for r in first} == {0.0} and {r["seed"] for r in second} == {7.0}
    assert len(read_records([out])) == 16
    assert len(read_records([detail_path(out, "bins")])) == 24
