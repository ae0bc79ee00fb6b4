"""Serial, joblib and Dask runs of a grid give the same records; a user's GridSearchCV
over a skfbnn estimator runs on Dask through joblib's Dask backend."""

from __future__ import annotations

import importlib.util
import io

import numpy as np
import pytest

from skfbnn.bench.bandit import BanditTask
from skfbnn.bench.parallel import call_limited, map_cells
from skfbnn.bench.tasks import RegressionTask, run_task
from tests.conftest import FAST, SHARED_DATA

needs_dask = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="needs dask.distributed (pip install skfbnn[dask])")
TIMES = {"fit_time", "wall_time"}


def _square(x):
    import torch

    return x * x, torch.get_num_threads()


def test_map_cells_keeps_order_and_limits_threads():
    assert list(map_cells(_square, [3, 1, 2])) == [(9, 1), (1, 1), (4, 1)]
    assert list(map_cells(_square, [3, 1, 2], n_jobs=2, threads=2)) == [(9, 2), (1, 2), (4, 2)]
    assert call_limited(_square, 5, threads=1) == (25, 1)
    with pytest.raises(ValueError, match="n_jobs must be"):
        list(map_cells(_square, [1], n_jobs=0))
    with pytest.raises(ValueError, match="threads must be"):
        list(map_cells(_square, [1], threads=0))


def _tasks():
    """A tiny grid of each kind: SGLD regression folds (torch) and the bandit's greedy MLP
    (numpy/BLAS) beside the uniform policy."""
    reg = RegressionTask(["diabetes"], ["sgld"], n_splits=2, device="cpu", params=FAST)
    tasks = [reg]
    if (SHARED_DATA / "mushroom").is_dir():
        tasks.append(BanditTask(["uniform", "greedy"], data_home=SHARED_DATA, n_seeds=2,
                                horizon=128))
    return tasks


def _strip(records):
    return [{k: v for k, v in r.items() if k not in TIMES} for r in records]


@pytest.fixture(scope="module")
def serial_records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serial")
    return [_strip(run_task(t, folder / f"{t.name}.csv", log=io.StringIO()))
            for t in _tasks()]


def test_joblib_gives_the_serial_records(serial_records, tmp_path):
    for task, serial in zip(_tasks(), serial_records, strict=True):
        out = tmp_path / f"{task.name}.csv"
        assert _strip(run_task(task, out, n_jobs=2, log=io.StringIO())) == serial


@pytest.fixture(scope="module")
def dask_client():
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("needs dask.distributed")
    from skfbnn.bench.parallel import dask_client as make

    client = make("local", n_workers=2, threads=1)
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


@needs_dask
def test_dask_gives_the_serial_records(serial_records, dask_client, tmp_path):
    address = dask_client.scheduler.address  # a running scheduler, as --scheduler ADDRESS
    assert address.startswith("tcp://127.0.0.1:")
    for task, serial in zip(_tasks(), serial_records, strict=True):
        out = tmp_path / f"{task.name}.csv"
        records = run_task(task, out, scheduler=address, log=io.StringIO())
        assert _strip(records) == serial


@needs_dask
def test_grid_search_runs_on_dask_through_joblib(dask_client):
    """``joblib.parallel_backend("dask")`` sends GridSearchCV's fits to the Dask workers
    (pickled estimators, each fit in a worker process) and gives the serial result."""
    import joblib
    from sklearn.model_selection import GridSearchCV

    from skfbnn import SGLDRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=60)
    grid = {"step_size": [0.3, 3.0]}
    est = SGLDRegressor(random_state=0, device="cpu", verbose=0, **FAST)
    serial = GridSearchCV(est, grid, cv=2).fit(X, y)
    with joblib.parallel_backend("dask"):
        on_dask = GridSearchCV(est, grid, cv=2, n_jobs=-1).fit(X, y)
    assert on_dask.best_params_ == serial.best_params_
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_score"],
                                  serial.cv_results_["mean_test_score"])
    workers = dask_client.run(lambda: __import__("os").getpid())
    assert len(workers) == 2  # the work had two processes to go to
