"""Speed benchmarks: every ratio measured side by side in one run.

Subcommands (``steps`` when none is named):

``steps``
    Milliseconds per step of every family at its estimator defaults on the Boston-sized problem
    (455 x 13; synthetic unless ``--data-home`` is given, then the training rows of Boston's
    split 0), and the ratios the speed page quotes: fSGLD / SGLD and fSGHMC / SGHMC per
    step (one chain), 8 chains / 1 chain for the four SG-MCMC samplers, fBNN / BBB (also with
    BBB on fBNN's network), ifBNN / BBB and ifBDE / deep ensemble. The time per step is the
    slope ``(t(2k) - t(k)) / k`` between fits of ``k`` and ``2k`` steps (``n_burnin`` with one
    kept draw for the samplers, ``n_iter`` for the optimisers, ``min_epochs=0``), so one-off
    costs (the GP pre-fit, validation, diagnostics, predictions) cancel. One untimed short fit
    of every configuration runs first; then the configurations take turns within each repeat
    (the order reversed on odd repeats) with a garbage collection before every timed fit, so
    that load from other processes falls on all of them alike; times and ratios are medians
    over the repeats of the per-repeat values. ``--quick`` (k = 100, pCNL 25, two repeats)
    takes about two minutes on two idle cores; the default (k = 300, pCNL 75, five repeats)
    is the measurement.

``driver``
    Time per step of every family with this checkout's driver loop
    (``skfbnn/inference/run.py``) and with another checkout's (``--against``, e.g. a git
    worktree of the commit before): each family's driver call is recorded once from a fit,
    then blocks of ``--steps`` steps run on the same inputs and random state with the two
    drivers in turn, ``--repeats`` blocks each, in CPU time by default (``--clock``).
    Everything but the driver is the same code, and the minimum over blocks is what a block
    costs without interference, so the ratio holds on a loaded machine better than two runs of
    ``steps`` do. Run-length hooks that fire once (the step cap at the end of burn-in, the
    held-out checkpoints) stay out of the blocks.

``fit``
    Whole default fits on the training rows of Boston's split 0 (needs the UCI data):
    fSGHMC against SGHMC (and fSGHMC without its GP pre-fit), or with ``--chains`` eight
    chains (the default) against one.

``threads``
    ``SGHMCRegressor`` (3000 burn-in steps) with one or two torch threads inside the fit and
    one or eight chains, alone and as two fits at once (as in a parallel benchmark grid).

``device``
    Time per step on each device named (``--devices cpu cuda``), optionally on a larger
    problem (``--rows``) and network (``--hidden``).

``mh``
    Kernel steps per second of pCN and MALA, and of pCN's ``n x n`` dual readout against the
    ``(h+1) x (h+1)`` primal one, on ``--n`` rows of kin8nm with one hidden layer of
    ``--width`` units.

``mh-fit``
    Seconds per step of a Metropolis-Hastings estimator at its defaults (pCNL unless
    ``--estimator``) on a UCI training set (protein's split 0 unless ``--dataset``), inputs
    standardised: the estimator's own kernel and starting state, ``--n-steps`` steps
    timed, and the default run length's time at that rate (an extrapolation: the steps
    only).

``compile``
    The default network's forward and backward (eight chains, 256 rows) on one thread,
    eager against ``torch.compile``, and the compile time.

``peers``
    Microseconds per sampler step of skfbnn's SGLD (at its defaults, and with the settings
    that leave the work of the peers: fixed prior scale and noise, identity preconditioner,
    constant step) and SGHMC beside BlackJAX's SGLD and SGHMC (jitted, ``vmap`` over
    chains), posteriors' SGLD and the network's forward and backward alone (JAX and torch),
    one chain and eight, on the Boston-sized problem, interleaved in one run
    (``speed_peers.py``; the peers come with the ``bench`` extra, and a missing one prints
    "not installed").

``small-calls``
    Microseconds per one-row ``predict``, ``predict_draws`` and ``predict(return_std=True)``
    of every named regressor (its default posterior size, a short run) against
    ``MLPRegressor.predict`` on one row, the calls taking turns (``speed_small.py``).

``network``
    One 8-chain SGHMC, SGLD and fSGLD step on 256 rows of MNIST-1D with the built-in MLP and
    with :class:`skfbnn.nn.zoo.CNN1d`, and fSGLD with the CNN at other
    ``n_measurement_points`` (``--measurement-points M ...``): slopes of whole fits
    (``speed_network.py``).

``mh-body``
    Seconds per pCNL step of a small Conv1d body against the MLP of the same readout width,
    and that MLP through the generic path, in interleaved rounds (``speed_mh_body.py``).

``threads-work``
    One torch thread against two per step, for an MLP step, a CNN step and a full-batch pCNL
    step on protein, with each step's work as ``FIT_THREADS=None`` weighs it
    (``speed_threads.py``).

``predict-memory``
    Peak resident memory (Linux) of ``predict(return_std=True)``, ``predict_proba`` or
    ``sample_y`` on ``--rows`` random rows (a million by default) with a default-size
    posterior (SGHMC's 8 chains of 25 draws), above the memory before the call. Run it in
    a process of its own: the peak is the process's.

Usage:
    python benchmarks/speed.py --quick
    python benchmarks/speed.py steps --repeats 5 --k 300
    python benchmarks/speed.py driver --against ../base/skfbnn/inference/run.py
    python benchmarks/speed.py fit --chains --data-home ../shared/data/uci
    python benchmarks/speed.py threads
    python benchmarks/speed.py device --devices cpu cuda
    python benchmarks/speed.py mh --width 1024 --n 256 --data-home ../shared/data/uci
    python benchmarks/speed.py mh-fit --data-home ../shared/data/uci
    python benchmarks/speed.py compile
    python benchmarks/speed.py predict-memory --rows 1000000 --call predict_std
    python benchmarks/speed.py peers --repeats 5 --k 200 --chains 1 8
    python benchmarks/speed.py small-calls
    python benchmarks/speed.py network --measurement-points 75 50
    python benchmarks/speed.py mh-body --rows 1024 --chains 8
    python benchmarks/speed.py threads-work --data-home ../shared/data
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

OWN_SUBCOMMANDS = ("steps", "driver", "fit", "threads", "device", "mh", "mh-fit", "compile",
                   "predict-memory")


def fit_seconds(est, X, y, clock=time.perf_counter) -> float:
    """Seconds of ``est.fit(X, y)`` on ``clock`` (wall by default; ``time.process_time`` for
    the CPU time of this process, which other processes' load changes less), after a
    collection of the garbage earlier fits left (which would otherwise fall into this one)."""
    gc.collect()
    start = clock()
    est.fit(X, y)
    return clock() - start


def boston_sized_problem(rows: int = 455) -> tuple[np.ndarray, np.ndarray]:
    """The synthetic 455 x 13 regression problem (``rows`` rows of the same kind)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, 13))
    return X, np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=rows)


def boston(data_home: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Training rows of Boston's split 0, inputs standardised with their own statistics."""
    from skfbnn.datasets import load_uci_split
    from skfbnn.datasets._fetch import data_home_or_fetch

    home = data_home_or_fetch(data_home, "bostonHousing")  # none given: download once
    X, _, y, _ = load_uci_split("bostonHousing", 0, data_home=home)
    std = X.std(0)
    return (X - X.mean(0)) / np.where(std > 0, std, 1.0), y


def _median_repeats(values, scale: float = 1.0, digits: int = 3) -> str:
    return (f"{np.median(values) * scale:.{digits}f}  (repeats "
            + " ".join(f"{v * scale:.{digits}f}" for v in values) + ")")


# -- steps ---------------------------------------------------------------------------------

SAMPLERS = {"sgld": "SGLDRegressor", "fsgld": "FunctionalSGLDRegressor",
            "sghmc": "SGHMCRegressor", "fsghmc": "FunctionalSGHMCRegressor"}
OPTIMISERS = {"bbb": "BBBRegressor", "fbnn": "FBNNRegressor", "ifbnn": "IFBNNRegressor",
              "ensemble": "DeepEnsembleRegressor", "ifbde": "IFBDERegressor"}


def sampler_maker(cls: str, device: str = "cpu", **params):
    """``make(n_steps, seed)``: the sampler ``cls`` (a name in ``skfbnn``) on ``device`` with
    ``params``, ``n_steps`` burn-in steps and one kept draw, no stretch to ``min_epochs``
    passes."""
    import skfbnn

    est = getattr(skfbnn, cls)
    return lambda n, r: est(n_burnin=n, n_samples=1, thinning=1, min_epochs=0, random_state=r,
                            device=device, **params)


def step_slope(make, n: int, seed: int, X, y, clock=time.perf_counter) -> float:
    """Seconds per step: ``(t(2n) - t(n)) / n`` between fits of ``make(2n, seed)`` and
    ``make(n, seed)``, so the one-off costs of a fit cancel."""
    return (fit_seconds(make(2 * n, seed), X, y, clock)
            - fit_seconds(make(n, seed), X, y, clock)) / n


def step_configurations() -> dict:
    """``{label: (make(n_steps, seed), family)}``: every family at its defaults, the samplers
    with one chain too, and BBB on fBNN's network."""
    import skfbnn

    configs = {}
    for name, cls in SAMPLERS.items():
        for chains in (None, 1):
            label = name if chains is None else f"{name}, 1 chain"
            extra = {} if chains is None else {"n_chains": 1}
            configs[label] = (sampler_maker(cls, **extra), name)
    configs["pcnl"] = (lambda n, r: skfbnn.PCNLRegressor(
        n_burnin=n, n_samples=1, thinning=1, random_state=r, device="cpu"), "pcnl")
    for name, cls in OPTIMISERS.items():
        est = getattr(skfbnn, cls)
        configs[name] = (lambda n, r, est=est: est(n_iter=n, min_epochs=0, random_state=r,
                                                   device="cpu"), name)
    network = {k: v for k, v in skfbnn.FBNNRegressor().get_params().items()
               if k in ("hidden_layer_sizes", "activation")}
    configs["bbb on fBNN's network"] = (lambda n, r: skfbnn.BBBRegressor(
        n_iter=n, min_epochs=0, random_state=r, device="cpu", **network), "bbb")
    return configs


def default_steps(label: str) -> int:
    """Steps of a default fit of ``label``'s family on the 455-row problem (its run length
    before any stretch to ``min_epochs`` passes, which is shorter here)."""
    import skfbnn

    name = label.split(",")[0].split(" ")[0]
    cls = {**SAMPLERS, **OPTIMISERS, "pcnl": "PCNLRegressor"}[name]
    p = getattr(skfbnn, cls)().get_params()
    return p["n_iter"] if "n_iter" in p else p["n_burnin"] + p["n_samples"] * p["thinning"]


RATIOS = (
    ("fSGLD / SGLD per step, 1 chain", "fsgld, 1 chain", "sgld, 1 chain"),
    ("fSGHMC / SGHMC per step, 1 chain", "fsghmc, 1 chain", "sghmc, 1 chain"),
    ("8 chains / 1 chain, SGLD", "sgld", "sgld, 1 chain"),
    ("8 chains / 1 chain, fSGLD", "fsgld", "fsgld, 1 chain"),
    ("8 chains / 1 chain, SGHMC", "sghmc", "sghmc, 1 chain"),
    ("8 chains / 1 chain, fSGHMC", "fsghmc", "fsghmc, 1 chain"),
    ("fBNN / BBB, each at its defaults", "fbnn", "bbb"),
    ("fBNN / BBB on fBNN's network", "fbnn", "bbb on fBNN's network"),
    ("ifBNN / BBB", "ifbnn", "bbb"),
    ("ifBDE / deep ensemble", "ifbde", "ensemble"),
)


def cmd_steps(args) -> None:
    import torch

    import skfbnn.device

    skfbnn.device.FIT_THREADS = args.threads
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    k = args.k or (100 if args.quick else 300)
    k_mh = args.k_mh or max(k // 4, 10)
    repeats = args.repeats or (2 if args.quick else 5)
    X, y = boston(args.data_home) if args.data_home else boston_sized_problem()
    configs = step_configurations()
    if args.only:
        configs = {label: c for label, c in configs.items() if c[1] in args.only}
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} threads available, {args.threads} per fit; problem "
          f"{X.shape} ({'Boston split 0' if args.data_home else 'synthetic'}); k = {k} "
          f"(pCNL {k_mh}), repeats = {repeats}, {args.clock} time", flush=True)
    for make, _ in configs.values():  # warm-up: imports and first-call set-up, not timed
        fit_seconds(make(5, 0), X, y)
    slopes: dict[str, list[float]] = {label: [] for label in configs}
    for r in range(repeats):
        order = list(configs) if r % 2 == 0 else list(configs)[::-1]
        for label in order:
            make, family = configs[label]
            n = k_mh if family == "pcnl" else k
            slopes[label].append(step_slope(make, n, r, X, y, clock))
        print(f"repeat {r}: " + ", ".join(f"{label} {1e3 * s[-1]:.2f}"
                                          for label, s in slopes.items()), flush=True)
    print("\n| configuration | ms / step (median) | repeats | default steps (this problem) |")
    print("|---|---|---|---|")
    for label, values in slopes.items():
        print(f"| {label} | {1e3 * np.median(values):.3f} | "
              + " ".join(f"{1e3 * v:.3f}" for v in values) + f" | {default_steps(label)} |")
    print("\n| ratio | median | repeats |")
    print("|---|---|---|")
    for text, num, den in RATIOS:
        if num in slopes and den in slopes:
            ratios = np.asarray(slopes[num]) / np.asarray(slopes[den])
            print(f"| {text} | {np.median(ratios):.2f} | "
                  + " ".join(f"{v:.2f}" for v in ratios) + " |")


# -- driver --------------------------------------------------------------------------------

def load_driver(path: str):
    """Another checkout's driver module (its ``skfbnn/inference/run.py``), loaded as a module
    of this package (its relative imports resolve here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("skfbnn.inference._other_run", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _null_transform(n_fields: int):
    """A transform whose update returns its state and ``n_fields`` info values per chain."""
    from collections import namedtuple

    from skfbnn.inference.types import Transform

    State = namedtuple("State", "params log_post")
    Info = namedtuple("Info", [f"f{i}" for i in range(n_fields)])

    def init(params, batch, gen):
        return State(params, params["w"][:, 0])

    def update(state, batch, gen):
        return state, Info(*(state.log_post * (i + 1) for i in range(n_fields)))

    return Transform(init, update)


class _Captured(Exception):
    """Raised in place of a run: the fit's driver call was recorded."""


def cmd_driver(args) -> None:
    """Every family's steps with this checkout's driver loop and with another's, taking turns
    in one process on the same inputs: everything else (kernels, network, hooks) is the same
    code, so the ratio is the driver's alone."""
    import torch

    import skfbnn.device
    import skfbnn.inference.families as families
    import skfbnn.inference.mh.policy as policy
    import skfbnn.inference.run as this
    import skfbnn.inference.sgmcmc.policy as sampling

    skfbnn.device.FIT_THREADS = 1
    torch.set_num_threads(1)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    drivers = {"this": this.run, "other": load_driver(args.against).run}
    X, y = boston_sized_problem()
    configs = step_configurations()
    if args.only:
        configs = {label: c for label, c in configs.items() if label in args.only}
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}; problem "
          f"{X.shape} (synthetic); blocks of {args.steps} steps, {args.repeats} per driver; "
          f"{args.clock} time; other driver: {args.against}", flush=True)

    def capture(transform, params, X, y, gen, **kwargs):
        raise _Captured(transform, params, X, y, gen, kwargs)

    calls = {}
    for fields in (1, 4):  # the driver alone: an update that does nothing else
        calls[f"driver alone, {fields} info field(s)"] = (
            _null_transform(fields), {"w": torch.zeros(8, 1)}, torch.zeros(455, 13),
            torch.zeros(455, 1), torch.Generator().manual_seed(0),
            {"n_steps": 0, "batch_size": 455})
    families.run = policy.run = sampling.run = capture
    for label, (make, _) in configs.items():
        try:  # long run lengths: burn-in hooks that fire once (the step cap) stay out
            make(10**6, 0).fit(X, y)
        except _Captured as call:
            calls[label] = call.args
    families.run = policy.run = sampling.run = this.run

    def block(label, driver):
        transform, params, Xt, yt, gen, kwargs = calls[label]
        gen.set_state(start_state[label])
        kwargs = {**kwargs, "n_steps": args.steps}
        start = clock()
        drivers[driver](transform, params, Xt, yt, gen, **kwargs)
        return (clock() - start) / args.steps

    start_state = {label: call[4].get_state() for label, call in calls.items()}
    times = {(label, d): [] for label in calls for d in drivers}
    for label in calls:
        for driver in drivers:  # warm-up
            block(label, driver)
        for r in range(args.repeats):
            for driver in (("this", "other") if r % 2 == 0 else ("other", "this")):
                times[label, driver].append(block(label, driver))
        a, b = np.asarray(times[label, "this"]), np.asarray(times[label, "other"])
        print(f"{label}: this {1e3 * a.min():.3f} ms (min), {1e3 * np.median(a):.3f} (median);"
              f" other {1e3 * b.min():.3f}, {1e3 * np.median(b):.3f}", flush=True)
    print("\n| configuration | ms / step, this driver (min; median) | other driver (min; median)"
          " | this / other: min over min | median of paired ratios |")
    print("|---|---|---|---|---|")
    for label in calls:
        a, b = np.asarray(times[label, "this"]), np.asarray(times[label, "other"])
        print(f"| {label} | {1e3 * a.min():.3f}; {1e3 * np.median(a):.3f} | "
              f"{1e3 * b.min():.3f}; {1e3 * np.median(b):.3f} | {a.min() / b.min():.3f} | "
              f"{np.median(a / b):.3f} |")


# -- fit -----------------------------------------------------------------------------------

def cmd_fit(args) -> None:
    import torch

    from skfbnn import FunctionalSGHMCRegressor, SGHMCRegressor

    def timed(est, X, y):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        est.fit(X, y)
        return time.perf_counter() - wall, time.process_time() - cpu

    if args.chains:
        makers = {
            "sghmc": lambda r: SGHMCRegressor(random_state=r, device="cpu"),
            "sghmc, 1 chain": lambda r: SGHMCRegressor(random_state=r, device="cpu",
                                                       n_chains=1),
            "fsghmc": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu"),
            "fsghmc, 1 chain": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu",
                                                                 n_chains=1),
        }
        pairs = (("8 / 1 chain, SGHMC whole fit", "sghmc", "sghmc, 1 chain"),
                 ("8 / 1 chain, fSGHMC whole fit", "fsghmc", "fsghmc, 1 chain"))
    else:
        makers = {
            "sghmc": lambda r: SGHMCRegressor(random_state=r, device="cpu"),
            "fsghmc": lambda r: FunctionalSGHMCRegressor(random_state=r, device="cpu"),
            "fsghmc, prior_fit_iter=0": lambda r: FunctionalSGHMCRegressor(
                random_state=r, device="cpu", prior_fit_iter=0),
        }
        pairs = (("fSGHMC / SGHMC, whole fit", "fsghmc", "sghmc"),
                 ("fSGHMC without pre-fit / SGHMC", "fsghmc, prior_fit_iter=0", "sghmc"))
    X, y = boston(args.data_home)
    for make in makers.values():  # warm-up
        make(0).set_params(n_burnin=5, n_samples=2, thinning=1).fit(X, y)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"repeats={args.repeats}, Boston split 0 ({X.shape[0]} x {X.shape[1]}), default "
          "fits on the CPU", flush=True)
    times = {name: [] for name in makers}
    for r in range(args.repeats):
        for name in list(makers) if r % 2 == 0 else list(makers)[::-1]:
            times[name].append(timed(makers[name](r), X, y))
    for clock, column in (("wall", 0), ("CPU", 1)):
        print(f"-- {clock} time")
        seconds = {name: np.asarray(v)[:, column] for name, v in times.items()}
        for name, values in seconds.items():
            print(f"{name:26s} {_median_repeats(values, digits=2)} s per fit")
        for label, num, den in pairs:
            print(f"{label + ':':33s} {_median_repeats(seconds[num] / seconds[den], digits=2)}")


# -- threads -------------------------------------------------------------------------------

def fit_with_threads(threads: int, chains: int, steps: int) -> float:
    """Wall seconds of one SGHMC fit with ``threads`` torch threads inside it."""
    import skfbnn.device
    from skfbnn import SGHMCRegressor

    skfbnn.device.FIT_THREADS = threads
    X, y = boston_sized_problem()
    est = SGHMCRegressor(n_burnin=steps, n_samples=1, thinning=1, n_chains=chains, min_epochs=0,
                         hidden_layer_sizes=(50,), device="cpu", random_state=0)
    return fit_seconds(est, X, y)


def cmd_threads(args) -> None:
    import multiprocessing as mp

    print("| threads per fit | chains | alone (s) | two at once (s each) |")
    print("|---|---|---|---|")
    with mp.get_context("spawn").Pool(2) as pool:
        for threads in (1, 2):
            for chains in (8, 1):
                job = (threads, chains, args.steps)
                alone = pool.apply(fit_with_threads, job)
                pair = [pool.apply_async(fit_with_threads, job) for _ in range(2)]
                both = " / ".join(f"{r.get():.2f}" for r in pair)
                print(f"| {threads} | {chains} | {alone:.2f} | {both} |", flush=True)


# -- device --------------------------------------------------------------------------------

def cmd_device(args) -> None:
    import torch

    import skfbnn

    X, y = boston_sized_problem(args.rows or 455)
    extra = {} if args.hidden is None else {"hidden_layer_sizes": (args.hidden, args.hidden)}

    def make(name, steps, device, seed):
        cls = getattr(skfbnn, {**SAMPLERS, **OPTIMISERS}[name])
        if name in SAMPLERS:
            return cls(n_burnin=steps, n_samples=1, thinning=1, min_epochs=0, device=device,
                       random_state=seed, **extra)
        return cls(n_iter=steps, min_epochs=0, device=device, random_state=seed, **extra)

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no CUDA device"
    print(f"torch {torch.__version__}; {gpu}; {torch.get_num_threads()} CPU threads; "
          f"problem {X.shape}; k = {args.k}; {extra or 'default network'}", flush=True)
    for method in args.methods:
        for device in args.devices:
            fit_seconds(make(method, 5, device, 0), X, y)  # warm-up
    for method in args.methods:
        slopes = {}
        for device in args.devices:
            values = [(fit_seconds(make(method, 2 * args.k, device, r), X, y)
                       - fit_seconds(make(method, args.k, device, r), X, y)) / args.k
                      for r in range(args.repeats)]
            slopes[device] = float(np.median(values))
        base = slopes[args.devices[0]]
        print(f"{method:9s} " + ", ".join(
            f"{d} {1e3 * s:.2f} ms/step ({s / base:.2f}x)" for d, s in slopes.items()),
            flush=True)


# -- mh ------------------------------------------------------------------------------------

def cmd_mh(args) -> None:
    """pCN against MALA, and pCN's dual readout against the primal, kernel steps only."""
    import torch

    from skfbnn.datasets import load_uci
    from skfbnn.datasets._fetch import data_home_or_fetch
    from skfbnn.inference.mh import mala, pcn
    from skfbnn.inference.mh.build import prior_draws
    from skfbnn.inference.mh.ntk import NTKLayout
    from skfbnn.inference.mh.reparam import marginal_potential
    from skfbnn.inference.types import BayesProblem
    from skfbnn.likelihoods import GaussianLikelihood
    from skfbnn.nn.functional import init_params, make_forward
    from skfbnn.nn.mlp import build_mlp

    torch.set_num_threads(args.threads)
    X, y = load_uci(args.dataset, data_home=data_home_or_fetch(args.data_home, args.dataset),
                    return_X_y=True)
    X, y = X[: args.n], y[: args.n]
    X = torch.tensor((X - X.mean(0)) / X.std(0))
    y = torch.tensor(((y - y.mean()) / y.std())[:, None])
    net = build_mlp(X.shape[1], 1, (args.width,), "gelu")
    problem = BayesProblem(make_forward(net), GaussianLikelihood([0.1]), None, len(X),
                           network=net)

    def steps_per_second(module, **kwargs) -> float:
        gen = torch.Generator().manual_seed(0)
        batch = {"x": X, "y": y}
        params = init_params(net, args.chains, gen, device=torch.device("cpu"),
                             dtype=torch.float64)
        ntk = dict(sigma_w=2**0.5, sigma_b=0.1, sigma_w_out=1.0, sigma_b_out=0.1,
                   reparametrize=True, marginalize_readout=False)
        params = prior_draws(problem, batch, params, gen, **ntk)
        transform = module.build(problem, step_size=0.01, **kwargs)
        state = transform.init(params, batch, gen)
        for _ in range(3):  # warm-up
            state, _ = transform.update(state, batch, gen)
        start = time.perf_counter()
        for _ in range(args.n_steps):
            state, _ = transform.update(state, batch, gen)
        return args.n_steps / (time.perf_counter() - start)

    def potential_seconds(dual: bool) -> float:
        layout = NTKLayout.from_network(net)
        gen = torch.Generator().manual_seed(1)
        hidden = torch.randn(args.chains, layout.n_hidden, generator=gen, dtype=torch.float64)
        Psi = layout.features(hidden, X)
        lam = torch.tensor([0.01], dtype=torch.float64)
        marginal_potential(Psi, y, lam, dual)
        start = time.perf_counter()
        for _ in range(args.n_steps):
            marginal_potential(Psi, y, lam, dual)
        return (time.perf_counter() - start) / args.n_steps

    print(f"n={args.n}, width={args.width}, p={args.width + 1}, chains={args.chains}, "
          f"torch threads={torch.get_num_threads()}")
    auto = "pcn (auto: dual)" if args.n < args.width + 1 else "pcn (auto: primal)"
    rates = {auto: steps_per_second(pcn), "mala (auto)": steps_per_second(mala),
             "pcn (dual forced)": steps_per_second(pcn, dual=True),
             "pcn (primal forced)": steps_per_second(pcn, dual=False)}
    print("| sampler | steps/s | chain-samples/s |")
    print("|---|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.1f} | {rate * args.chains:.1f} |")
    print(f"pCN / MALA throughput: {rates[auto] / rates['mala (auto)']:.2f}x")
    print(f"pCN dual / primal throughput: "
          f"{rates['pcn (dual forced)'] / rates['pcn (primal forced)']:.2f}x")
    dual, primal = potential_seconds(True), potential_seconds(False)
    print(f"potential only: dual {1e3 * dual:.2f} ms, primal {1e3 * primal:.2f} ms, "
          f"speed-up {primal / dual:.2f}x")


# -- mh-fit --------------------------------------------------------------------------------

def mh_step(estimator: str, dataset: str, split: int, data_home: str | None):
    """The kernel, starting state, batch and generator of a default fit of ``estimator`` (a
    Metropolis-Hastings class name) on a UCI training set, inputs standardised as the UCI
    benchmarks do: ``(transform, state, batch, gen, X)``, captured where the fit would run."""
    import skfbnn
    import skfbnn.inference.mh.policy as policy
    from skfbnn.datasets import load_uci_split
    from skfbnn.datasets._fetch import data_home_or_fetch

    X, _, y, _ = load_uci_split(dataset, split, data_home=data_home_or_fetch(data_home, dataset))
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    est = getattr(skfbnn, estimator)(random_state=0, device="cpu")

    def capture(transform, params, X, y, gen, **kwargs):
        raise _Captured(transform, params, X, y, gen, kwargs)

    real, policy.run = policy.run, capture
    try:
        est.fit(X, y)
    except _Captured as call:
        transform, params, Xt, yt, gen, _ = call.args
    finally:
        policy.run = real
    batch = {"x": Xt, "y": yt, "measure": None}
    return transform, transform.init(params, batch, gen), batch, gen, X


def cmd_mh_fit(args) -> None:
    """Seconds per step of a Metropolis-Hastings estimator at its defaults on a UCI training
    set (inputs standardised, as the UCI benchmarks do), timed on the estimator's own kernel
    and starting state, and the default run length they make."""
    import torch

    import skfbnn
    from skfbnn.inference.mh.policy import accept_reject_steps

    torch.set_num_threads(args.threads)
    transform, state, batch, gen, X = mh_step(args.estimator, args.dataset, args.split,
                                              args.data_home)
    est = getattr(skfbnn, args.estimator)()
    wall, cpu = [], []
    for _ in range(args.n_steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        state, _ = transform.update(state, batch, gen)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    steps = accept_reject_steps(est.get_params())
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"{args.threads} thread(s); {args.estimator} defaults on {args.dataset} split "
          f"{args.split} ({X.shape[0]} x {X.shape[1]}); {args.n_steps} steps")
    print(f"seconds per step: wall median {np.median(wall):.3f} (min {min(wall):.3f}), CPU "
          f"median {np.median(cpu):.3f} (min {min(cpu):.3f})")
    print(f"a default fit's {steps} steps at the median: {steps * np.median(wall) / 60:.1f} "
          f"min wall, {steps * np.median(cpu) / 60:.1f} min CPU (steps only: an "
          "extrapolation)")


# -- compile -------------------------------------------------------------------------------

def cmd_compile(args) -> None:
    """Forward and backward of a log-likelihood through the default network (eight chains, one
    hidden tanh layer of 50, 256 rows of 13 inputs, float32, one thread): the library's eager
    path against ``torch.compile`` of the same function, with the compile time."""
    import torch

    from skfbnn.nn.functional import init_params, make_forward
    from skfbnn.nn.mlp import make_network

    torch.set_num_threads(1)
    net = make_network(13, 1, (50,), "tanh")
    forward = make_forward(net)
    gen = torch.Generator().manual_seed(0)
    params = init_params(net, 8, gen, device=torch.device("cpu"), dtype=torch.float32)
    X = torch.randn(8, args.rows, 13, generator=gen)
    y = torch.randn(8, args.rows, 1, generator=gen)

    def log_lik(p):
        return -0.5 * (forward(p, X) - y).pow(2).sum((1, 2))

    def step(fn):
        def go():
            leaves = {k: v.detach().requires_grad_() for k, v in params.items()}
            torch.autograd.grad(fn(leaves).sum(), list(leaves.values()))
        return go

    def per_call(go) -> float:  # the least of five blocks: the cost without interference
        go()
        best = math.inf
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(args.calls):
                go()
            best = min(best, (time.perf_counter() - start) / args.calls)
        return best

    eager = per_call(step(log_lik))
    start = time.perf_counter()
    compiled = step(torch.compile(log_lik))
    compiled()
    compile_s = time.perf_counter() - start
    fast = per_call(compiled)
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}; forward "
          f"and backward, 8 chains x {args.rows} rows, 13-50-1 tanh network, float32")
    print(f"eager {1e6 * eager:.0f} us, torch.compile {1e6 * fast:.0f} us per call "
          f"({fast / eager:.2f}x), compile time {compile_s:.1f} s (= {compile_s / eager:.0f} "
          "eager calls)")


# -- predict-memory ------------------------------------------------------------------------

def cmd_predict_memory(args) -> None:
    """Peak memory of one prediction on many rows with a default-size posterior: SGHMC's
    eight chains of 25 draws of its 13-50-1 network (a short run), or the classifier's."""
    import resource

    import skfbnn

    def rss_mib() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20

    X, y = boston_sized_problem()
    short = dict(n_burnin=50, thinning=1, min_epochs=0, random_state=0, device="cpu")
    if args.call == "predict_proba":
        est = skfbnn.SGHMCClassifier(**short).fit(X, (y > 0).astype(int) + (y > 1))
    else:
        est = skfbnn.SGHMCRegressor(**short).fit(X, y)
    rows = np.random.default_rng(1).normal(size=(args.rows, X.shape[1]))
    est.predict(rows[:10])
    before, start = rss_mib(), time.perf_counter()
    if args.call == "predict_std":
        est.predict(rows, return_std=True)
    elif args.call == "sample_y":
        est.sample_y(rows, n_samples=1)
    else:
        est.predict_proba(rows)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{args.call} on {args.rows} x {X.shape[1]} rows, {np.prod(est.posterior_.shape)} "
          f"draws: resident {before:.0f} MiB before, peak {peak:.0f} MiB, "
          f"+{peak - before:.0f} MiB; {seconds:.1f} s")


# -- subcommands that live in modules beside this one -----------------------------------------

SIBLINGS = {
    "peers": ("speed_peers", "µs per sampler step: skfbnn beside BlackJAX and posteriors"),
    "small-calls": ("speed_small", "one-row predict and predict_draws of every regressor "
                                   "against MLPRegressor.predict"),
    "network": ("speed_network", "a step of the 1-D CNN against the MLP's, and fSGLD's at "
                                 "other measurement-set sizes"),
    "mh-body": ("speed_mh_body", "a pCNL step of a Conv1d body against the MLP's"),
    "threads-work": ("speed_threads", "one torch thread against two, for steps of three "
                                      "sizes of work"),
    "warm-refit": ("speed_warm", "a warm-started update of the bandit's size, with the GP "
                                 "prior carried over and built anew"),
    "prior-grad": ("speed_prior", "the log posterior's gradient with the weight prior's in "
                                  "closed form, against autograd of the whole"),
}
"""Subcommand -> (module beside this file, help). Each module has ``add_arguments(parser)``
and ``run(args)``."""


def _sibling(name: str):
    """A module beside this file, which holds a subcommand (:data:`SIBLINGS`)."""
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module(name)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("steps", help="ms per step of every family, and the ratios")
    p.add_argument("--quick", action="store_true", help="k = 100 (pCNL 25), two repeats")
    p.add_argument("--k", type=int, default=None, help="steps of the short fit (default 300)")
    p.add_argument("--k-mh", type=int, default=None, help="pCNL's k (default k / 4)")
    p.add_argument("--repeats", type=int, default=None, help="default 5 (--quick: 2)")
    p.add_argument("--threads", type=int, default=1, help="torch threads inside a fit")
    p.add_argument("--data-home", default=None,
                   help="time on Boston's split 0 from this UCI folder instead of synthetic rows")
    p.add_argument("--only", nargs="+", default=None,
                   help="families to time, e.g. sgld fsgld (default: all)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall time, or this process's CPU time (less affected by other "
                        "processes on a shared machine; a fit runs on one thread)")
    p.set_defaults(func=cmd_steps)

    p = sub.add_parser("driver", help="every family with this driver loop and another's")
    p.add_argument("--against", required=True,
                   help="another checkout's skfbnn/inference/run.py (e.g. a git worktree of "
                        "the commit before)")
    p.add_argument("--steps", type=int, default=100, help="steps of a timed block")
    p.add_argument("--repeats", type=int, default=20, help="blocks per driver and configuration")
    p.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    p.add_argument("--only", nargs="+", default=None,
                   help="configurations to time, e.g. 'sgld, 1 chain' sghmc (default: all)")
    p.set_defaults(func=cmd_driver)

    p = sub.add_parser("mh-fit", help="seconds per step of a default Metropolis-Hastings "
                                      "fit on a UCI training set")
    p.add_argument("--estimator", default="PCNLRegressor")
    p.add_argument("--dataset", default="protein-tertiary-structure")
    p.add_argument("--split", type=int, default=0)
    p.add_argument("--data-home", default=None,
                   help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
    p.add_argument("--n-steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=cmd_mh_fit)

    p = sub.add_parser("compile", help="the network's forward and backward, eager against "
                                       "torch.compile")
    p.add_argument("--rows", type=int, default=256)
    p.add_argument("--calls", type=int, default=300)
    p.set_defaults(func=cmd_compile)

    for name, (module_name, help_text) in SIBLINGS.items():
        module = _sibling(module_name)
        p = sub.add_parser(name, help=help_text)
        module.add_arguments(p)
        p.set_defaults(func=module.run)

    p = sub.add_parser("predict-memory", help="peak memory of a prediction on many rows")
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--call", choices=("predict_std", "predict_proba", "sample_y"),
                   default="predict_std")
    p.set_defaults(func=cmd_predict_memory)

    p = sub.add_parser("fit", help="whole default fits: fSGHMC / SGHMC, or 8 / 1 chains")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--data-home", default=None,
                   help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
    p.add_argument("--chains", action="store_true")
    p.set_defaults(func=cmd_fit)

    p = sub.add_parser("threads", help="one or two torch threads per fit, alone and in pairs")
    p.add_argument("--steps", type=int, default=3000)
    p.set_defaults(func=cmd_threads)

    p = sub.add_parser("device", help="time per step on each device")
    p.add_argument("--devices", nargs="+", default=["cpu", "cuda"])
    p.add_argument("--k", type=int, default=200)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--methods", nargs="+", default=["sghmc", "fsghmc", "bbb", "ensemble", "ifbde"])
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--hidden", type=int, default=None)
    p.set_defaults(func=cmd_device)

    p = sub.add_parser("mh", help="pCN / MALA and dual / primal throughput")
    p.add_argument("--dataset", default="kin8nm")
    p.add_argument("--data-home", default=None,
                   help="folder of the UCI data sets "
                        "(default: $SKFBNN_DATA_HOME, else fetched)")
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--n-steps", type=int, default=100)
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=cmd_mh)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in (*OWN_SUBCOMMANDS, *SIBLINGS, "-h", "--help"):
        argv.insert(0, "steps")
    args = build_parser().parse_args(argv)
    warnings.simplefilter("ignore")  # short runs: R-hat, ESS and convergence warnings
    args.func(args)


if __name__ == "__main__":
    main()
