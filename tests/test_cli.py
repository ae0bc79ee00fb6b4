"""Tests for the ``skfbnn`` command (skfbnn.cli)."""

from __future__ import annotations

import contextlib
import importlib.util
import io

import pytest

from skfbnn.bench.report import read_records
from skfbnn.cli import build_parser, main
from skfbnn.inference.registry import METHODS

BENCH = ["--n-splits", "2", "--methods", "sgld",
         "--set", "n_burnin=20", "n_samples=3", "thinning=2", "n_chains=2"]


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) == 0
    return out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def bench_csv(tmp_path_factory):
    """One small diabetes benchmark (2 folds, tiny SGLD run), then a rerun."""
    path = tmp_path_factory.mktemp("bench") / "r.csv"
    first = _run(["bench", *BENCH, "--out", str(path)])
    text_after_first = path.read_text()
    second = _run(["bench", *BENCH, "--out", str(path)])
    return path, first, second, text_after_first


def test_methods_lists_the_registry(capsys):
    assert main(["methods"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(METHODS)
    assert len(lines) == len(METHODS) >= 6
    for line, (_name, spec) in zip(lines, METHODS.items(), strict=False):
        assert f"prior={spec.prior}" in line
        assert line.endswith(f"update={spec.module.__name__}")  # the method's own file
        assert spec.module.__name__.startswith("skfbnn.inference.")
        assert f"family={spec.family}" in line and f"posterior={spec.posterior}" in line


def test_bench_writes_records_and_prints_table(bench_csv):
    path, (out, err), _, text = bench_csv
    records = read_records([path])
    assert len(text.strip().splitlines()) == 3  # header and two records
    assert len(records) == 2
    assert [(r["dataset"], r["method"], int(r["split"])) for r in records] == [
        ("diabetes", "sgld", 0), ("diabetes", "sgld", 1)]
    for r in records:
        assert r["rmse"] > 0 and r["fit_time"] > 0 and 0 <= r["coverage95"] <= 1
    lines = out.strip().splitlines()
    assert lines[0].startswith("| dataset | method | splits | rmse | test_ll")
    assert lines[1].startswith("|---|")
    assert lines[2].startswith("| diabetes | sgld | 2 | ") and "±" in lines[2]
    assert len(lines) == 3
    assert "split 0" in err and "split 1" in err


def test_bench_rerun_skips_done_splits(bench_csv):
    path, (out1, _), (out2, err2), text = bench_csv
    assert path.read_text() == text  # nothing appended
    assert "split" not in err2  # nothing was fitted
    assert out2 == out1  # the table is built from the file


def test_report_writes_markdown_and_plot(bench_csv, tmp_path, capsys):
    path = bench_csv[0]
    md = tmp_path / "table.md"
    argv = ["report", str(path), "--markdown", str(md)]
    has_mpl = importlib.util.find_spec("matplotlib") is not None
    png = tmp_path / "plot.png"
    if has_mpl:
        argv += ["--plot", str(png), "--column", "rmse"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert md.read_text() == out  # printed table plus newline
    assert "| diabetes | sgld | 2 |" in out
    if has_mpl:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_set_argument_exits():
    with pytest.raises(SystemExit, match="key=value"):
        main(["bench", "--set", "oops"])


def test_set_values_are_parsed_as_literals():
    from skfbnn.cli import _parse_set

    assert _parse_set(["a=1", "b=0.5", "c=(3, 4)", "d=tanh", "e=None"]) == {
        "a": 1, "b": 0.5, "c": (3, 4), "d": "tanh", "e": None}


def test_parser_requires_a_command():
    with pytest.raises(SystemExit):
        build_parser().parse_args([])


def test_bench_seed_offsets_every_splits_random_state(bench_csv, tmp_path):
    """--seed 0 repeats the default grid exactly; another seed gives other fits of the same
    splits (split k is fitted with random_state = seed + k)."""
    default = read_records([bench_csv[0]])
    runs = {}
    for seed in (0, 7):
        path = tmp_path / f"seed{seed}.csv"
        _run(["bench", *BENCH, "--seed", str(seed), "--out", str(path)])
        runs[seed] = read_records([path])
    assert [r["rmse"] for r in runs[0]] == [r["rmse"] for r in default]
    assert all(a["rmse"] != b["rmse"] for a, b in zip(runs[7], default, strict=True))
