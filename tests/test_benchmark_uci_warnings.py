"""``benchmarks/uci.py --count-warnings``: the recording that the docs' table of warnings at
the defaults rests on counts a fit's warnings, and the table prints what the records hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SHARED_DATA

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

pytestmark = pytest.mark.skipif(not (SHARED_DATA / "uci").is_dir(),
                                reason=f"shared data not found at {SHARED_DATA}")


@pytest.fixture()
def uci(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import uci

    return uci


def _record(uci, **params):
    task = ("sgld", "yacht", 0, 0, {"n_burnin": 5, "n_samples": 2, "thinning": 1,
                                    "min_epochs": 0, **params},
            str(SHARED_DATA / "uci"), "cpu", True, 1)
    return uci._fit(task)


def test_a_diverging_fit_is_counted_with_its_warnings(uci):
    record = _record(uci, step_size=300.0)  # 100 times the default: draws escape
    assert record["n_warnings"] >= 1
    assert "SamplerDivergenceWarning" in record["warnings"]


def test_the_table_holds_the_counts_of_the_records(uci, tmp_path):
    from skfbnn.bench.records import append_record

    append_record(tmp_path / "sgld.csv", _record(uci, step_size=300.0))
    table = uci.warnings_table(tmp_path)
    row = next(line for line in table.splitlines() if line.startswith("| sgld |"))
    assert row.split("|")[2].strip() not in ("0", "–")  # yacht: the warnings counted
    assert "SamplerDivergenceWarning" in table
