"""One torch thread against two per step, for steps of three sizes of work, side by side.

The work of a step is what :func:`skfbnn.device.threads_for_work` compares with
:data:`skfbnn.device.PARALLEL_WORK`: rows per step x parameter sets x the values a row makes
through the network (:func:`skfbnn.nn.functional.forward_values`). Three steps, each timed
with one and two threads in turn within every repeat (the least of the repeats is kept):

* SGLD, the default 13-50-1 tanh MLP, 8 chains x 256 rows (the Boston-sized problem): the
  slope ``(fit(2k) - fit(k)) / k`` of whole fits, each fit's least time over the repeats
  (``k`` = 20 x ``--k``, as its steps are short);
* SGHMC, :class:`skfbnn.nn.zoo.CNN1d`, 8 chains x 256 rows of MNIST-1D: the same slope
  (``k`` = ``--k``);
* pCNL at its defaults, 4 chains x protein's 41 157 training rows of split 0: kernel steps
  alone (:func:`speed.mh_step`).

    python benchmarks/speed.py threads-work --data-home ../shared/data
"""

from __future__ import annotations

import os
import time

import numpy as np


def add_arguments(p) -> None:
    """The ``threads-work`` subcommand's options."""
    p.add_argument("--data-home", default=None,
                   help="folder holding mnist1d/ and uci/ (default: $SKFBNN_DATA_HOME, else "
                        "fetched)")
    p.add_argument("--k", type=int, default=20, help="steps of the shorter fit")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--mh-steps", type=int, default=5, help="pCNL steps per repeat")


def _fit_times(make, X, y, threads: int, k: int) -> tuple[float, float]:
    """Seconds of fits of ``k`` and ``2 k`` steps on ``threads`` threads."""
    import skfbnn.device

    skfbnn.device.FIT_THREADS = threads
    times = []
    for n in (k, 2 * k):
        start = time.perf_counter()
        make(n).fit(X, y)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def run(args) -> None:
    import torch
    from speed import boston_sized_problem, mh_step

    import skfbnn
    import skfbnn.device
    from skfbnn.datasets import load_mnist1d
    from skfbnn.datasets._fetch import data_home_or_fetch
    from skfbnn.nn.functional import forward_values
    from skfbnn.nn.mlp import make_network
    from skfbnn.nn.zoo import CNN1d

    home = args.data_home or os.environ.get("SKFBNN_DATA_HOME")
    mnist = data_home_or_fetch(home, "mnist1d")
    protein = "protein-tertiary-structure"
    uci = data_home_or_fetch(None if home is None else os.path.join(home, "uci"), protein)
    Xm, ym, _, _ = load_mnist1d(data_home=mnist, return_X_y=True)
    Xb, yb = boston_sized_problem()
    fits = {
        "SGLD, MLP 13-50-1, 8 chains x 256 rows": (
            lambda n: skfbnn.SGLDRegressor(n_burnin=n, n_samples=1, thinning=1, min_epochs=0,
                                           random_state=0, device="cpu"),
            Xb, yb, 20 * args.k,
            256 * 8 * forward_values(make_network(13, 1, (50,), "tanh"), None, 13)),
        "SGHMC, CNN1d, 8 chains x 256 rows": (
            lambda n: skfbnn.SGHMCClassifier(n_burnin=n, n_samples=1, thinning=1,
                                             min_epochs=0, batch_size=256, random_state=0,
                                             device="cpu", network=CNN1d, input_shape=(1, 40)),
            Xm[:256], ym[:256], args.k, 256 * 8 * forward_values(CNN1d(40, 10), (1, 40), 40)),
    }
    transform, state, batch, gen, X = mh_step("PCNLRegressor", protein, 0, uci)
    mh_work = len(X) * 4 * forward_values(make_network(9, 1, (50, 50), "gelu"), None, 9)
    seconds = {label: {1: [], 2: []} for label in [*fits, "pCNL, protein, 4 chains x all rows"]}
    for make, X_, y_, _, _ in fits.values():  # warm-up
        _fit_times(make, X_, y_, 1, 2)
    for r in range(args.repeats):
        for threads in (1, 2) if r % 2 == 0 else (2, 1):
            for label, (make, X_, y_, k, _) in fits.items():
                seconds[label][threads].append(_fit_times(make, X_, y_, threads, k))
            torch.set_num_threads(threads)
            start = time.perf_counter()
            for _ in range(args.mh_steps):
                state, _ = transform.update(state, batch, gen)
            seconds["pCNL, protein, 4 chains x all rows"][threads].append(
                (0.0, (time.perf_counter() - start) / args.mh_steps))
    works = [w for *_, w in fits.values()] + [mh_work]
    print(f"torch {torch.__version__}; {os.cpu_count()} CPUs; least of {args.repeats} repeats; "
          f"PARALLEL_WORK = {skfbnn.device.PARALLEL_WORK}")
    print("| step | work (values) | 1 thread (ms) | 2 threads (ms) | 2 / 1 | threads by work |")
    print("|---|---|---|---|---|---|")
    ks = [k for *_, k, _ in fits.values()] + [1]
    for (label, by), work, k in zip(seconds.items(), works, ks, strict=True):
        one, two = (1e3 * np.diff(np.min(by[t], axis=0))[0] / k for t in (1, 2))
        chosen = 2 if work >= skfbnn.device.PARALLEL_WORK else 1
        print(f"| {label} | {work:,} | {one:.1f} | {two:.1f} | {two / one:.2f} | {chosen} |")
