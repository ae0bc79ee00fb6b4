"""Tests for the ``skfbnn`` command (skfbnn.cli)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
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


def _fail(argv) -> str:
    """Run a command that must fail as a user error: exit status 2, nothing on stdout,
    one line on stderr and no traceback; return that line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
    lines = err.getvalue().strip().splitlines()
    assert code == 2, (argv, code, err.getvalue())
    assert out.getvalue() == "", out.getvalue()
    assert len(lines) == 1 and "Traceback" not in err.getvalue(), err.getvalue()
    return lines[0]


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
    assert "--set expects key=value" in _fail(["bench", "--set", "oops"])


def test_set_values_are_parsed_as_literals():
    from skfbnn.cli import parse_set

    assert parse_set(["a=1", "b=0.5", "c=(3, 4)", "d=tanh", "e=None"]) == {
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


# ------------------------------------------------------------- the other tasks
from tests.conftest import SHARED_DATA  # noqa: E402  (the other tasks)

CLASSIFY = ["bench", "--task", "classification", "--dataset", "digits",
            "--methods", "mlp,mlp_ensemble", "--n-splits", "2", "--noise-levels", "1",
            "--shuffle-levels", "0.5", "--set", "max_iter=20", "hidden_layer_sizes=(8,)",
            "mlp_ensemble.n_estimators=2"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_bench_classification_records_summary_and_resumption(tmp_path):
    out = tmp_path / "ood.csv"
    stdout, err = _run([*CLASSIFY, "--out", str(out)])
    records = read_records([out])
    # 2 methods x 2 repetitions x (clean, flip, noise 1, shuffle 0.5)
    assert len(records) == 16 and {r["task"] for r in records} == {"classification"}
    assert [r["shift"] for r in records[:4]] == ["none", "flip", "noise", "shuffle"]
    lines = stdout.splitlines()
    assert lines[0].startswith("| dataset | method | splits | accuracy | log_loss | brier | ece "
                               "| auroc_entropy | auroc_mi | fit_time |")
    assert lines[2].startswith("| digits | mlp | 2 | ") and lines[2].count("n/a") == 1
    assert lines[3].startswith("| digits | mlp_ensemble | 2 | ") and "n/a" not in lines[3]
    assert "accuracy under shift, digits:" in stdout and "| flip 1 | noise 1 |" in stdout
    assert "[4/4] classification digits mlp_ensemble split 1" in err
    assert (tmp_path / "ood.md").read_text() == stdout
    if importlib.util.find_spec("matplotlib") is not None:
        for name in ("reliability", "entropy", "mi", "shift"):
            assert (tmp_path / f"ood_{name}_digits.png").read_bytes()[:4] == b"\x89PNG"
    text = out.read_text()
    stdout2, err2 = _run([*CLASSIFY, "--out", str(out)])
    assert out.read_text() == text and stdout2 == stdout
    assert "4 of 4 cells already in" in err2 and "[1/" not in err2
    # report rebuilds the same summary from the files
    fig = tmp_path / "again"
    report_out, _ = _run(["report", str(out), str(tmp_path / "ood.bins.csv"),
                          "--markdown", str(tmp_path / "r.md"), "--figures", str(fig)])
    assert report_out == stdout and (tmp_path / "r.md").read_text() == stdout


TEN = ["bench", "--task", "classification", "--dataset", "digits", "--id-classes", "all",
       "--n-splits", "1", "--methods", "sgld,mlp", "--no-report", "--set", "n_chains=2",
       "n_burnin=10", "n_samples=2", "thinning=1", "min_epochs=0", "mlp.max_iter=20"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_bench_network_cnn_on_all_classes_keeps_its_records_apart(tmp_path):
    out = tmp_path / "ten.csv"
    cnn_out, cnn_err = _run([*TEN, "--network", "cnn", "--out", str(out)])
    records = read_records([out])
    assert [r["method"] for r in records] == ["sgld", "mlp"]  # one record a cell: no shifts
    assert {(r["network"], r["id_classes"], r["shifts"]) for r in records} == {
        ("cnn", "all", "none")}
    assert "under shift" not in cnn_out and "| digits | sgld | 1 | " in cnn_out
    # the default network adds its own cells beside the CNN's, never reusing them
    mlp_out, mlp_err = _run([*TEN, "--out", str(out)])
    assert "[2/2]" in mlp_err and "already in" not in mlp_err
    records = read_records([out])
    assert [r["network"] for r in records] == ["cnn", "cnn", "mlp", "mlp"]
    sgld = {r["network"]: r["accuracy"] for r in records if r["method"] == "sgld"}
    assert sgld["cnn"] != sgld["mlp"]  # another network, another fit
    # the scikit-learn baseline is the same MLPClassifier whatever the network
    mlp = [r["accuracy"] for r in records if r["method"] == "mlp"]
    assert mlp[0] == mlp[1]
    report, _ = _run(["report", str(out)])
    assert "network=cnn" in report and "network=mlp" in report
    assert report.count("| digits | sgld | 1 | ") == 2  # one row per network, never pooled
    _, again = _run([*TEN, "--network", "cnn", "--out", str(out)])
    assert "2 of 2 cells already in" in again


@pytest.mark.skipif(not (SHARED_DATA / "mushroom").is_dir(), reason="Mushroom not found")
def test_bench_bandit_baselines(tmp_path):
    out = tmp_path / "bandit.csv"
    stdout, err = _run(["bench", "--task", "bandit", "--methods", "uniform,oracle,greedy",
                        "--horizon", "128", "--n-seeds", "2", "--data-home", str(SHARED_DATA),
                        "--out", str(out), "--no-report"])
    records = read_records([out])
    assert len(records) == 6 and not (tmp_path / "bandit.md").exists()
    assert len(read_records([tmp_path / "bandit.curves.csv"])) == 12  # steps 64 and 128
    lines = stdout.splitlines()
    assert lines[0].startswith("| p | horizon | warm_start | method | seeds | regret | "
                               "expected_regret | relative_regret |")
    uniform = [ln for ln in lines if "| uniform |" in ln][0]
    oracle = [ln for ln in lines if "| oracle |" in ln][0]
    assert "| 100.0 ± 0.0 |" in uniform and "| 0.0 ± 0.0 | 0.0 ± 0.0 | 0.0 ± 0.0 |" in oracle
    assert "bandit p=0.5 greedy (warm start n/a) seed 1" in err


def test_bench_csv_regression_and_classification(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    path = tmp_path / "toy.csv"
    rows = ["a,b,colour,y,label"] + [
        f"{a:.4f},{b:.4f},{'red' if a > 0 else 'blue'},{2 * a - b:.4f},{'yes' if b > 0 else 'no'}"
        for a, b in X]
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "reg.csv"
    stdout, _ = _run(["bench", "--task", "csv", "--data", str(path), "--target", "y",
                      "--methods", "sgld", "--n-splits", "2", "--out", str(out), "--no-report",
                      "--set", "n_burnin=20", "n_samples=3", "thinning=2", "n_chains=2"])
    assert "| toy | sgld | 2 | " in stdout and len(read_records([out])) == 2
    stdout, _ = _run(["bench", "--task", "csv", "--data", str(path), "--target", "label",
                      "--methods", "sgld", "--n-splits", "2",
                      "--set", "n_burnin=20", "n_samples=3", "thinning=2", "n_chains=2"])
    assert stdout.splitlines()[2].startswith("| toy | sgld | 2 | ")
    assert "under shift" not in stdout  # a CSV file has no OOD rows or shifts
    assert "--data FILE and --target" in _fail(["bench", "--task", "csv", "--data", str(path)])


def test_bench_rejects_a_parameter_no_method_takes():
    assert "no parameter 'n_iter' in sgld" in _fail(["bench", *BENCH, "n_iter=5"])
    assert "no parameter" in _fail(["bench", "--task", "classification", "--methods", "mlp",
                                    "--set", "n_burnin=3"])


def test_bench_regression_report_writes_table_and_figure(bench_csv, tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(bench_csv[0].read_text())  # finished cells: nothing is refitted
    out, err = _run(["bench", *BENCH, "--out", str(path), "--report"])
    assert out == bench_csv[1][0]  # the same table
    assert (tmp_path / "r.md").read_text() == out
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "r_test_ll.png").read_bytes()[:4] == b"\x89PNG"
    assert "split" not in err


# ------------------------------------------------------------- bad options: one line, exit 2
BAD_BENCH = [
    (["--n-splits", "0"], "--n-splits must be a positive int. Got 0."),
    (["--n-splits", "1"], "--n-splits must be at least 2 for k-fold"),
    (["--task", "bandit", "--n-seeds", "0"], "--n-seeds must be a positive int"),
    (["--task", "classification", "--n-splits", "-1"], "--n-splits must be a positive"),
    (["--methods", ","], "--methods names no method"),
    (["--methods", "sgldd"], "unknown name 'sgldd'; did you mean 'sgld'"),
    (["--task", "bandit", "--methods", "uniform,greedyy"], "did you mean 'greedy'"),
    (["--dataset", "yachtt"], "unknown name 'yachtt'; did you mean 'yacht'"),
    (["--task", "classification", "--dataset", "mnist"], "did you mean 'mnist1d'"),
    (["--task", "bandit", "--horizon", "0"], "--horizon must be a positive int"),
    (["--task", "bandit", "--buffer-size", "0"], "--buffer-size must be a positive int"),
    (["--task", "bandit", "--update-every", "0"], "--update-every must be a positive int"),
    (["--task", "bandit", "--curve-every", "-3"], "--curve-every must be a positive int"),
    (["--task", "bandit", "--p", "2"], "--p must lie in [0, 1]"),
    (["--task", "bandit", "--p", "nan"], "--p must lie in [0, 1]"),
    (["--task", "bandit", "--p", "0.4,x"], "--p must lie in [0, 1]. Got x"),
    (["--task", "bandit", "--p", "0.4,0.4"], "--p lists a probability twice"),
    (["--n-jobs", "0"], "--n-jobs must be a positive int or -1"),
    (["--threads", "0"], "--threads must be a positive int"),
    (["--methods", "sgld", "--set", "n_burnin=-5"], "'n_burnin' parameter of --set (sgld)"),
    (["--methods", "sgld", "--set", "sgld.step_size=-1"], "'step_size' parameter"),
    (["--task", "classification", "--methods", "mlp", "--set", "max_iter=-5"],
     "--set (mlp): The 'max_iter' parameter"),
    (["--device", "tpu"], "--device: device must be"),
    (["--scheduler", "foo"], "--scheduler must be 'local' or a scheduler address"),
    (["--task", "classification", "--data", "x.csv"], "--task csv --data FILE"),
    (["--target", "y"], "--target is read by --task csv only"),
    (["--task", "classification", "--id-classes", "0,1,42"], "--id-classes: "),
    (["--task", "classification", "--id-classes", "3"], "--id-classes: "),
    (["--task", "classification", "--id-classes", "0,0,1"], "--id-classes: "),
    (["--task", "classification", "--id-classes", "0,x"], "--id-classes expects"),
    (["--task", "classification", "--noise-levels", "1,a"], "--noise-levels expects"),
    (["--task", "classification", "--shuffle-levels", "2"], "shuffle strengths must be"),
    (["--task", "csv", "--dataset", "x", "--data", "x.csv", "--target", "y"], "--dataset"),
    (["--task", "csv", "--data", "missing.csv", "--target", "y"], "existing CSV file"),
    (["--n-splits", "abc"], "invalid int value: 'abc'"),
    (["--network", "cnn"], "--network is read by --task classification only"),
    (["--task", "bandit", "--network", "mlp"], "--network is read by --task classification"),
    (["--task", "csv", "--data", "x.csv", "--target", "y", "--network", "cnn"],
     "--network is read by --task classification only"),
    (["--task", "classification", "--network", "rnn"], "invalid choice: 'rnn'"),
    (["--task", "classification", "--methods", "cnn_ensemble"],
     "--methods cnn_ensemble: a baseline of --network cnn only"),
    (["--task", "classification", "--id-classes", "all,3"], "--id-classes expects"),
    (["--task", "regressionn"], "invalid choice"),
]


@pytest.mark.parametrize(("argv", "message"), BAD_BENCH, ids=lambda v: " ".join(v)
                         if isinstance(v, list) else None)
def test_a_bad_bench_option_is_one_line_and_exit_status_2(argv, message):
    line = _fail(["bench", *argv])
    assert message in line and line.startswith("skfbnn bench: error: "), line


def test_device_cuda_without_cuda_is_refused():
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    assert "--device: device='cuda' requested but CUDA is not available" in _fail(
        ["bench", "--device", "cuda"])


def test_an_unreachable_scheduler_fails_fast():
    """Dask's Client waited 30 s and then raised an OSError."""
    import socket
    import time

    with socket.socket() as sock:  # a port on which nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tic = time.perf_counter()
    line = _fail(["bench", "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert "cannot reach the scheduler" in line and time.perf_counter() - tic < 10


def test_an_unknown_uci_set_in_a_data_folder_is_refused(tmp_path):
    line = _fail(["bench", "--dataset", "yatch", "--data-home", str(tmp_path)])
    assert "did you mean 'yacht'" in line


def test_report_refuses_what_is_not_a_record_file(tmp_path, monkeypatch):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("dataset,method,split,rmse\n")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "cut.csv").write_text("dataset,method,rmse\nd,sgld,1\nd,sgld\nd,sgld,2\n")
    for name, message in [("missing.csv", "'{}': no such record file"),
                          (".", "is not a file"),
                          ("empty.csv", "no records"),
                          ("header.csv", "no records"),
                          ("other.csv", "not records of skfbnn bench"),
                          ("cut.csv", "cut.csv': line 3 has 2 fields")]:
        path = tmp_path / name
        line = _fail(["report", str(path)])
        assert message.format(path) in line and line.startswith("skfbnn report: error:"), line


def test_report_plot_without_matplotlib_is_one_line(bench_csv, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    line = _fail(["report", str(bench_csv[0]), "--plot", str(tmp_path / "p.png")])
    assert "--plot needs matplotlib" in line


# ------------------------------------------------------------- CSV files from the command line
def _csv(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_bench_csv_refusals_are_one_line(tmp_path):
    rows = "".join(f"{i},{i % 2},{i * 0.5}\n" for i in range(10))
    cases = [("a,b,y\n" + rows.replace("3,1,", "3,nan,", 1), "y",
              "numeric column 'b' has missing or non-finite cells (nan) on lines 5"),
             ("a,b,y\n" + rows.replace("4,0,", ",0,", 1), "y", "column 'a' has missing"),
             ("a,a,y\n" + rows, "y", "duplicate column names ('a' at columns [1, 2])"),
             ("a,b,y\n" + rows.replace("2.0\n", "inf\n", 1), "y",
              "numeric target 'y' has missing or non-finite cells (inf) on lines 6"),
             ("a,y\n1,2\n", "y", "at least two rows"),
             ("a,y\n1,red\n2,blue\n3,red\n", "y", "--target-kind classification")]
    for text, target, message in cases:
        path = _csv(tmp_path, text)
        kind = ["--target-kind", "regression"] if "red" in text else []
        line = _fail(["bench", "--task", "csv", "--data", str(path), "--target", target,
                      *kind])
        assert message in line and "t.csv" in line, line


def test_bench_csv_with_a_byte_order_mark(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    text = "\ufeffa,b,y\n" + "".join(f"{a:.3f},{b:.3f},{a - b:.3f}\n" for a, b in X)
    path = _csv(tmp_path, text)
    stdout, _ = _run(["bench", "--task", "csv", "--data", str(path), "--target", "a",
                      "--methods", "sgld", "--n-splits", "2", "--no-report", *BENCH[4:]])
    assert "| t | sgld | 2 | " in stdout  # 'a' found: the BOM is not part of its name


# ------------------------------------------------------------- options that change a result
def test_rerun_with_other_options_adds_cells_and_report_keeps_them_apart(bench_csv,
                                                                         tmp_path):
    """A 2-fold file resumed with --n-splits 3 reported '3 splits' mixing two partitions;
    --seed 7 printed the seed-0 table again."""
    path = tmp_path / "r.csv"
    path.write_text(bench_csv[0].read_text())
    out3, err3 = _run(["bench", *BENCH, "--n-splits", "3", "--out", str(path)])
    assert err3.count("diabetes sgld split") == 3  # three new folds, none reused
    assert "| diabetes | sgld | 3 | " in out3 and len(read_records([path])) == 5
    out7, err7 = _run(["bench", *BENCH, "--seed", "7", "--out", str(path)])
    assert err7.count("diabetes sgld split") == 2 and out7 != bench_csv[1][0]
    records = read_records([path])
    assert len(records) == 7
    assert sorted({(r["seed"], r["folds"]) for r in records}) == [
        (0.0, "2-fold"), (0.0, "3-fold"), (7.0, "2-fold")]
    report, _ = _run(["report", str(path)])
    heads = [ln for ln in report.splitlines() if ln.startswith("Records with")]
    assert heads == ["Records with seed=0, folds=2-fold:", "Records with seed=0, folds=3-fold:",
                     "Records with seed=7, folds=2-fold:"]
    assert report.count("| diabetes | sgld | 2 |") == 2 and "| diabetes | sgld | 3 |" in report
    only, _ = _run(["report", str(path), "--where", "seed=7"])
    assert only == out7
    assert "several settings" in _fail(["report", str(path), "--plot", str(tmp_path / "p.png")])


def test_rerun_with_other_overrides_adds_rows_of_their_own(bench_csv, tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(bench_csv[0].read_text())
    argv = ["bench", *BENCH, "thinning=3", "--out", str(path)]
    _, err = _run(argv)
    assert err.count("diabetes sgld split") == 2
    report, _ = _run(["report", str(path)])
    assert "| diabetes | sgld (n_burnin=20;n_chains=2;n_samples=3;thinning=2) | 2 |" in report
    assert "| diabetes | sgld (n_burnin=20;n_chains=2;n_samples=3;thinning=3) | 2 |" in report


def test_a_file_without_settings_columns_is_refused_and_still_reported(bench_csv, tmp_path):
    records = read_records([bench_csv[0]])
    keep = [c for c in records[0] if c not in ("seed", "folds", "data", "params")]
    path = tmp_path / "old.csv"
    path.write_text("\n".join([",".join(keep)] + [",".join(str(r[c]) for c in keep)
                                                  for r in records]) + "\n")
    line = _fail(["bench", *BENCH, "--out", str(path)])
    assert "old.csv" in line and "without the columns" in line
    report, _ = _run(["report", str(path)])
    assert "| diabetes | sgld | 2 |" in report


# ------------------------------------------------------------- any bad value (hypothesis)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from skfbnn.cli import TASK_METHODS  # noqa: E402


def _parses(text: str, kind) -> bool:
    try:
        kind(text)
    except ValueError:
        return False
    return True


def _probabilities(text: str) -> bool:
    """Whether ``--p`` would take ``text``: distinct comma-separated numbers in [0, 1]."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    values = [float(t) for t in items if _parses(t, float)]
    return (bool(items) and len(values) == len(items) and len(set(values)) == len(values)
            and all(0 <= v <= 1 for v in values))


TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=8)
COUNTS = ["--n-splits", "--horizon", "--buffer-size", "--update-every", "--curve-every",
          "--threads"]
VALID_METHODS = {*METHODS, "all"}
BAD_VALUES = st.one_of(
    st.tuples(st.just([]), st.sampled_from(COUNTS), st.integers(max_value=0).map(str)),
    st.tuples(st.just([]), st.just("--n-jobs"),
              st.one_of(st.just(0), st.integers(max_value=-2)).map(str)),
    st.tuples(st.just([]), st.just("--seed"), st.integers(max_value=-1).map(str)),
    st.tuples(st.just([]), st.sampled_from([*COUNTS, "--n-jobs", "--seed"]),
              TEXT.filter(lambda t: not _parses(t, int))),
    st.tuples(st.just([]), st.just("--p"),
              st.one_of(TEXT.filter(lambda t: not _probabilities(t)),
                        st.floats().filter(lambda p: not 0 <= p <= 1).map(repr))),
    st.tuples(st.just([]), st.just("--methods"),
              st.text("abcdefgilmnsu_, ", max_size=12).filter(
                  lambda t: not ({v.strip() for v in t.split(",") if v.strip()}
                                 <= VALID_METHODS and t.strip(", ")))),
    st.tuples(st.just(["--task", "classification"]), st.just("--id-classes"),
              st.lists(st.integers(-3, 12), max_size=11).filter(
                  lambda c: not (set(c) <= set(range(10)) and len(set(c)) == len(c)
                                 and 2 <= len(c) < 10)).map(lambda c: ",".join(map(str, c)))),
    st.tuples(st.just(["--methods", "sgld"]), st.just("--set"),
              st.sampled_from(["n_burnin", "n_samples", "thinning", "n_chains"]).flatmap(
                  lambda k: st.integers(max_value=-1).map(lambda v: f"{k}={v}"))),
)


def _check_bad_value(case):
    before, option, value = case
    line = _fail(["bench", *before, f"{option}={value}"])
    assert line.startswith("skfbnn bench: error: ")
    assert option in line or "parameter" in line, line  # names the option


@settings(max_examples=50, deadline=None)
@given(case=BAD_VALUES)
def test_any_bad_option_value_is_one_line_and_exit_status_2(case):
    _check_bad_value(case)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(case=BAD_VALUES)
def test_any_bad_option_value_is_one_line_and_exit_status_2_long(case):
    _check_bad_value(case)


def test_default_methods_are_registered_or_baselines():
    for methods in TASK_METHODS.values():
        assert methods and all(m in METHODS or m in ("mlp", "mlp_ensemble", "uniform",
                                                      "greedy", "oracle") for m in methods)


def test_a_value_error_while_cells_run_is_one_line_unless_debugging(monkeypatch, tmp_path):
    from skfbnn.bench.tasks import RegressionTask

    def broken(self, cell):
        raise ValueError("the data set could not be loaded")

    monkeypatch.setattr(RegressionTask, "run_cell", broken)
    monkeypatch.delenv("SKFBNN_DEBUG", raising=False)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["bench", *BENCH, "--out", str(tmp_path / "r.csv")]) == 1
    assert err.getvalue().strip().splitlines() == [
        "skfbnn bench: error: the data set could not be loaded (SKFBNN_DEBUG=1 shows the "
        "traceback)"]
    monkeypatch.setenv("SKFBNN_DEBUG", "1")
    with pytest.raises(ValueError, match="could not be loaded"):
        main(["bench", *BENCH])


def test_report_counts_a_cell_appended_twice_once(bench_csv, tmp_path):
    path = tmp_path / "twice.csv"
    lines = bench_csv[0].read_text().splitlines()
    path.write_text("\n".join([*lines, lines[-1]]) + "\n")
    out, err = _run(["report", str(path)])
    assert out == bench_csv[1][0]  # two splits, as in the file without the repeat
    assert "1 record(s) repeat a cell" in err and len(err.strip().splitlines()) == 1


HEADER = "dataset,method,split,rmse,test_ll,test_ll_gauss,crps,coverage95,fit_time"
FILES = st.one_of(
    st.binary(max_size=200),
    st.text(st.sampled_from("ab019.,-\n\r\" e"), max_size=200).map(
        lambda t: (HEADER + "\n" + t).encode()),
)


def _check_report_file(content: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.csv"
        path.write_bytes(content)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["report", str(path)])
    lines = [ln for ln in err.getvalue().splitlines() if not ln.startswith("RecordFileWarning")]
    assert "Traceback" not in err.getvalue()
    assert "could not convert" not in err.getvalue()  # a message of skfbnn's own
    if code == 0:
        assert out.getvalue().startswith("| dataset | method | splits |")
    else:
        assert code == 2 and len(lines) == 1 and lines[0].startswith("skfbnn report: error:")


@pytest.mark.filterwarnings("ignore::skfbnn.bench.records.RecordFileWarning")
@settings(max_examples=50, deadline=None)
@given(content=FILES)
def test_report_on_any_file_is_a_table_or_one_line(content):
    _check_report_file(content)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::skfbnn.bench.records.RecordFileWarning")
@settings(max_examples=1000, deadline=None)
@given(content=FILES)
def test_report_on_any_file_is_a_table_or_one_line_long(content):
    _check_report_file(content)


def test_a_data_set_that_cannot_be_downloaded_is_one_line(tmp_path, monkeypatch, capsys):
    """With no data folder, the bench fetches; a mirror without the files is one line
    naming the address, exit status 1, no traceback."""
    monkeypatch.delenv("SKFBNN_DATA_HOME", raising=False)
    monkeypatch.setenv("SKFBNN_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("SKFBNN_DATA_URL", (tmp_path / "empty-mirror").as_uri())
    assert main(["bench", "--dataset", "yacht", "--methods", "sgld", "--n-splits", "2"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith("skfbnn bench: error:") and "empty-mirror" in err
