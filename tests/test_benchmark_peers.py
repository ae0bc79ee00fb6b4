"""``benchmarks/speed.py peers`` at a tiny size: every row of the table is printed, with a
time for skfbnn and torch and for each peer that is installed."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

@pytest.fixture(scope="module")
def table():
    import skfbnn.device

    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))
        # the benchmark sets the package's thread count: restored for the other tests
        mp.setattr(skfbnn.device, "FIT_THREADS", skfbnn.device.FIT_THREADS)
        import speed
        import speed_peers

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            speed.main(["peers", "--k", "2", "--repeats", "1", "--chains", "1", "2"])
    rows = {}
    for line in out.getvalue().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3:
            rows[cells[0]] = cells[1:]
    return rows, speed_peers


def _is_time(cell: str) -> bool:
    return re.fullmatch(r"-?\d+", cell) is not None


@pytest.mark.slow  # JIT compilation of the JAX rows: about a minute on one core
def test_skfbnn_and_torch_rows(table):
    rows, sp = table
    for row in (sp.SKFBNN_DEFAULTS, sp.SKFBNN_SGLD, sp.SKFBNN_SGHMC, sp.TORCH_GRAD):
        assert all(_is_time(c) for c in rows[row]), (row, rows[row])
    assert all(row in rows for row in sp.ROWS)
    assert all(text in rows for text, _, _ in sp.RATIOS)
    assert re.match(r"-?\d", rows["skfbnn SGLD defaults / matched work"][0])


@pytest.mark.slow
def test_blackjax_rows(table):
    pytest.importorskip("blackjax")
    rows, sp = table
    for row in (sp.BLACKJAX_SGLD, sp.BLACKJAX_SGLD_SCAN, sp.BLACKJAX_SGHMC, sp.JAX_GRAD):
        assert all(_is_time(c) for c in rows[row]), (row, rows[row])


@pytest.mark.slow
def test_posteriors_row(table):
    pytest.importorskip("posteriors")
    rows, sp = table
    assert all(_is_time(c) for c in rows[sp.POSTERIORS_SGLD])


def test_missing_peer_prints_not_installed(monkeypatch, capsys):
    """A peer whose import fails prints "not installed" and the rest runs; the CUDA graph row
    says it needs a GPU on the CPU."""
    import skfbnn.device

    monkeypatch.setattr(skfbnn.device, "FIT_THREADS", skfbnn.device.FIT_THREADS)  # restored
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import speed
    import speed_peers

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'blackjax'", name="blackjax")

    monkeypatch.setattr(speed_peers, "PEERS", {speed_peers.BLACKJAX_SGLD: missing,
                                               speed_peers.TORCH_GRAD:
                                               speed_peers.torch_forward_backward,
                                               speed_peers.TORCH_SGLD_GRAPH:
                                               speed_peers.torch_sgld_graph})
    monkeypatch.setattr(speed_peers, "skfbnn_configs", lambda *args: [])
    speed.main(["peers", "--k", "2", "--repeats", "1", "--chains", "1"])
    out = capsys.readouterr().out
    assert f"| {speed_peers.BLACKJAX_SGLD} | not installed (blackjax) |" in out
    assert re.search(rf"\| {re.escape(speed_peers.TORCH_GRAD)} \| \d+ \|", out)
    assert f"| {speed_peers.TORCH_SGLD_GRAPH} | a GPU only |" in out


def test_the_cpu_clock_is_refused_on_a_gpu(monkeypatch):
    """CPU time does not time a GPU's queue: --clock cpu with --device cuda stops with a
    message, before anything runs."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import speed

    with pytest.raises(SystemExit, match="use the wall clock with --device cuda"):
        speed.main(["peers", "--device", "cuda", "--clock", "cpu"])
