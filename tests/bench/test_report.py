"""Tests for skfbnn.bench.report on synthetic records."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from skfbnn.bench.report import (
    COLUMNS,
    append_record,
    markdown_table,
    plot_records,
    read_records,
    summarize_records,
)


def _record(dataset, method, split, base):
    return {"dataset": dataset, "method": method, "split": split,
            **{c: base + i for i, c in enumerate(COLUMNS)}}


RMSE_A = [1.0, 2.0, 4.0, 7.0]


@pytest.fixture
def records():
    out = [_record("a", "sgld", k, v) for k, v in enumerate(RMSE_A)]
    out += [_record("a", "fsgld", 0, 10.0), _record("b", "sgld", 0, 3.0),
            _record("b", "sgld", 1, 5.0)]
    return out


def test_append_and_read_roundtrip(tmp_path, records):
    path = tmp_path / "sub" / "r.csv"
    for r in records[:4]:
        append_record(path, r)
    other = tmp_path / "s.csv"
    for r in records[4:]:
        append_record(other, r)
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(["dataset", "method", "split", *COLUMNS])  # one header
    assert len(lines) == 5
    back = read_records([path, other])
    assert len(back) == len(records)
    for got, want in zip(back, records, strict=False):
        assert got["dataset"] == want["dataset"] and got["method"] == want["method"]
        assert isinstance(got["rmse"], float) and got["split"] == float(want["split"])
        for c in COLUMNS:
            assert got[c] == pytest.approx(want[c], rel=1e-15)


def test_summarize_gives_mean_and_standard_error(records):
    summary = summarize_records(records)
    assert set(summary) == {("a", "sgld"), ("a", "fsgld"), ("b", "sgld")}
    mean, se, n = summary[("a", "sgld")]["rmse"]
    assert n == 4
    assert mean == pytest.approx(3.5)
    # sample std (ddof=1) of 1, 2, 4, 7 is sqrt(7); s.e. = sqrt(7) / 2
    assert se == pytest.approx(np.sqrt(7.0) / 2)
    values = np.array(RMSE_A) + COLUMNS.index("crps")
    mean, se, n = summary[("a", "sgld")]["crps"]
    assert mean == pytest.approx(values.mean())
    assert se == pytest.approx(values.std(ddof=1) / np.sqrt(4))
    assert summary[("b", "sgld")]["rmse"][:2] == pytest.approx((4.0, 1.0))
    mean, se, n = summary[("a", "fsgld")]["rmse"]
    assert (mean, n) == (10.0, 1) and np.isnan(se)


def test_markdown_table(records):
    table = markdown_table(summarize_records(records))
    lines = table.splitlines()
    assert lines[0] == "| dataset | method | splits | " + " | ".join(COLUMNS) + " |"
    assert lines[1] == "|" + "---|" * (len(COLUMNS) + 3)
    # sorted by (dataset, method); one record gives no standard error
    assert lines[2].startswith("| a | fsgld | 1 | 10.000 | 11.000 |")
    assert lines[3].startswith(f"| a | sgld | 4 | 3.500 ± {np.sqrt(7) / 2:.3f} | ")
    assert lines[4].startswith("| b | sgld | 2 | 4.000 ± 1.000 | 5.000 ± 1.000 |")
    assert len(lines) == 5
    # a column subset
    small = markdown_table(summarize_records(records), columns=("crps",)).splitlines()
    assert small[0] == "| dataset | method | splits | crps |"
    assert small[4] == "| b | sgld | 2 | 7.000 ± 1.000 |"


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot_records_writes_png(tmp_path, records):
    path = tmp_path / "p.png"
    plot_records(summarize_records(records), path, column="rmse")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
