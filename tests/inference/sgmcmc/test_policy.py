"""The stochastic-gradient MCMC run policy: batch, run length, the driver's arguments."""

import torch

import skfbnn.inference.sgmcmc.policy as policy
from skfbnn.inference.sgmcmc.policy import (
    MAX_BATCH,
    MIN_BATCH,
    SMALL_DATA_BATCH,
    SMALL_DATA_ROWS,
    sampler_batch,
    sampler_lengths,
    sampler_steps,
)


def test_sampler_min_epochs_stretches_burnin_and_thinning():
    hyper = {"n_burnin": 20, "n_samples": 4, "thinning": 5, "min_epochs": 10, "batch_size": 10}
    assert sampler_lengths(hyper, 40) == (20, 5)  # 40 steps already cover 10 epochs
    assert sampler_lengths(hyper, 400) == (200, 50)  # 10 epochs = 400 steps: factor 10
    assert sampler_steps(hyper, 400) == 400
    assert sampler_steps(hyper, 401) >= 401
    assert sampler_lengths({**hyper, "min_epochs": 0}, 10**6) == (20, 5)


def test_auto_batch_grows_so_min_epochs_fit_in_max_steps():
    hyper = {"n_burnin": 80, "n_samples": 4, "thinning": 5, "min_epochs": 10,
             "max_steps": 1000, "batch_size": "auto"}
    assert sampler_batch(hyper, 50) == SMALL_DATA_BATCH  # full batch (the stream caps it)
    assert sampler_batch(hyper, SMALL_DATA_ROWS) == SMALL_DATA_BATCH
    n = 100 * MIN_BATCH  # 10 passes of 64 rows: exactly 1000 steps
    assert n > SMALL_DATA_ROWS and sampler_batch(hyper, n) == MIN_BATCH
    assert sampler_batch(hyper, n + 100) == MIN_BATCH + 1
    hyper["max_steps"] = 100
    assert sampler_batch(hyper, 5000) == 500  # 10 passes of 500 rows in 100 steps
    assert sampler_batch(hyper, 10**6) == MAX_BATCH
    assert sampler_batch({**hyper, "max_steps": None}, 10**6) == MIN_BATCH
    assert sampler_batch({**hyper, "batch_size": 7}, 10**6) == 7
    # with the grown batch the run is max_steps long and covers min_epochs passes
    n_burnin, thinning = sampler_lengths(hyper, 5000)
    assert n_burnin + 4 * thinning == 100
    assert sampler_steps(hyper, 5000) * 500 >= 10 * 5000


def test_auto_batch_reaches_the_driver(monkeypatch):
    seen = {}

    def fake_run(*args, **kwargs):
        seen.update(kwargs)

    monkeypatch.setattr(policy, "run", fake_run)
    hyper = {"n_burnin": 80, "n_samples": 4, "thinning": 5, "min_epochs": 10,
             "max_steps": 100, "batch_size": "auto"}
    X = torch.zeros(5000, 1)
    policy.run_sampler(None, None, X, X[:, 0], None, hyper)
    assert seen["batch_size"] == 500 and seen["n_steps"] == 100
