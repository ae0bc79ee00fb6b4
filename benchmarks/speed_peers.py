"""``python benchmarks/speed.py peers``: microseconds per sampler step of skfbnn beside
BlackJAX and posteriors, side by side in one interleaved run.

The problem is the one ``speed.py steps`` times: 455 x 13 rows (synthetic
``boston_sized_problem()``, or with ``--data-home`` the training rows of Boston's split 0,
inputs standardised), a 13-50-1 tanh network in float32, 256 rows per chain per step, one
chain and eight (``--chains``). Every implementation steps on the same log posterior, the
Gaussian likelihood of the standardised targets with a fixed noise of 0.5 summed over the
minibatch and scaled by ``n / batch``, plus an isotropic ``N(0, 1)`` prior on every weight
and bias; each chain draws its own minibatch at every step (skfbnn without replacement,
from blocks of permutations; the peers with replacement).

Rows (columns: one chain, eight chains):

``skfbnn SGLD, defaults``
    ``SGLDRegressor`` at its defaults (``batch_size=256``, which ``"auto"`` is on these
    rows; learned prior scale with its Gibbs steps, learned noise, adaptive
    preconditioner, decaying step). Timed as ``speed.py steps`` times a family: the slope
    ``(t(2k) - t(k)) / k`` between whole fits of ``n_burnin=k`` and ``2k`` steps
    (``n_samples=1, thinning=1, min_epochs=0``), so the one-off costs of a fit cancel.
``skfbnn SGLD, matched work``
    The same fits with the settings that leave the peers' work per step:
    ``prior_std=1.0`` (a fixed scale, no Gibbs steps), ``noise_std=0.5 * std(y)`` (a fixed
    noise, 0.5 in the standardised units the fit works in; no noise parameter),
    ``preconditioner="identity"`` (no running mean of squared gradients),
    ``schedule="constant"``, ``step_size=0.01`` (an update step of ``0.01 / 455``, stable
    without the preconditioner; the default 3.0 diverges without it) and ``step_cap`` then
    inactive (it applies to the adaptive preconditioner only). What remains beyond the
    peers' work is the estimator's driver: minibatches cut from blocks of permutations, the
    per-step log posterior queued and read back every 100 steps, the finiteness check.
``skfbnn SGHMC, matched work``
    ``SGHMCRegressor`` with the same settings and ``n_leapfrog=None`` (the momentum is never
    redrawn, as BlackJAX's carried momentum below), ``friction=0.1`` (its default).
``BlackJAX SGLD, Python loop``
    ``blackjax.sgld`` with ``blackjax.sgmcmc.gradients.grad_estimator`` of the same log
    prior and per-row log-likelihood, the step ``jax.jit``-compiled with ``jax.vmap`` over
    chains, stepped in a Python loop; each step draws each chain's 256 row indices inside
    the compiled step (``jax.random.randint``, with replacement: the cheapest per-step draw;
    a permutation per step, as ``jax.random.choice`` without replacement makes, cost several
    times more on 8 chains). Update step ``0.01 / 455``.
``BlackJAX SGLD, lax.scan``
    The same step inside ``jax.lax.scan`` over ``k`` steps (one compiled call per timed
    block): the Python loop's dispatch cost taken out.
``BlackJAX SGHMC, lax.scan``
    ``blackjax.sgmcmc.diffusions.sghmc`` stepped with its momentum carried from step to step
    inside ``jax.lax.scan`` (``blackjax.sghmc``'s own step redraws the momentum and runs
    its inner steps on one minibatch), a fresh minibatch per step; its step ``h`` and
    friction ``alpha`` set to skfbnn's (``h = sqrt(eta)``, ``alpha = 0.1 / h``).
``posteriors SGLD, eager``
    ``posteriors.sgmcmc.sgld`` (torch, eager) on the same log posterior written with
    batched matrix products over a leading chain dimension; the row indices drawn per step
    with ``torch.randint`` (with replacement, as for BlackJAX).
``torch SGLD step, one CUDA graph`` (with ``--device cuda`` only)
    The matched SGLD step written in plain torch (each chain's rows drawn with
    ``torch.randint``, the gradient by autograd, BlackJAX's update) captured once with
    ``torch.cuda.graph`` and replayed: what a step costs on a GPU without a kernel launch per
    operator.
``forward + backward, JAX`` / ``forward + backward, torch``
    The log posterior's value and gradient alone on a fixed minibatch: ``jax.jit`` of
    ``jax.vmap`` over chains of ``jax.value_and_grad`` (each call waited for), and torch
    autograd through ``torch.baddbmm`` (one and eight chains by batched matrix products).

The peers' rows time ``k`` steps (calls) and divide by ``k``. One untimed warm-up of every
configuration runs first (it includes JIT compilation); then ``--repeats`` rounds each time
every configuration once, in reversed order on odd rounds, with a garbage collection before
each timed block, so that load from other processes falls on all alike. The table shows
medians over rounds, and each ratio is the median of the per-round ratios. The peers are
optional (``pip install "skfbnn[bench]"``, i.e. ``jax[cpu]``, ``blackjax`` and
``posteriors``); a row whose library is missing prints "not installed".

``--device cuda`` runs every row on a GPU: skfbnn's estimators with ``device="cuda"``, the
torch rows on it (each timed block waits for its kernels), JAX on its CUDA backend
(``JAX_PLATFORMS=cuda``, memory taken as needed); wall time only.
"""

from __future__ import annotations

import gc
import math
import os
import platform
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

NOISE = 0.5
"""Observation noise in standardised units of ``y``, fixed for every row."""
PRIOR_STD = 1.0
"""Prior standard deviation of every weight and bias."""
STEP_SIZE = 0.01
"""skfbnn's ``step_size`` per datum for the matched rows; the update step is
``STEP_SIZE / n_rows`` for every implementation."""
FRICTION = 0.1
"""SGHMC's momentum decay per step (skfbnn's default)."""
BATCH = 256
HIDDEN = 50

SKFBNN_DEFAULTS = "skfbnn SGLD, defaults"
SKFBNN_SGLD = "skfbnn SGLD, matched work"
SKFBNN_SGHMC = "skfbnn SGHMC, matched work"
BLACKJAX_SGLD = "BlackJAX SGLD, jit + vmap, Python loop"
BLACKJAX_SGLD_SCAN = "BlackJAX SGLD, jit + vmap, lax.scan"
BLACKJAX_SGHMC = "BlackJAX SGHMC, momentum carried, lax.scan"
POSTERIORS_SGLD = "posteriors SGLD, eager"
JAX_GRAD = "forward + backward, JAX jit value_and_grad"
TORCH_GRAD = "forward + backward, torch autograd"
TORCH_SGLD_GRAPH = "torch SGLD step, one CUDA graph"
ROWS = (SKFBNN_DEFAULTS, SKFBNN_SGLD, SKFBNN_SGHMC, BLACKJAX_SGLD, BLACKJAX_SGLD_SCAN,
        BLACKJAX_SGHMC, POSTERIORS_SGLD, JAX_GRAD, TORCH_GRAD, TORCH_SGLD_GRAPH)

RATIOS = (
    ("skfbnn SGLD defaults / matched work", SKFBNN_DEFAULTS, SKFBNN_SGLD),
    ("skfbnn SGLD matched / BlackJAX SGLD (Python loop)", SKFBNN_SGLD, BLACKJAX_SGLD),
    ("skfbnn SGLD matched / BlackJAX SGLD (lax.scan)", SKFBNN_SGLD, BLACKJAX_SGLD_SCAN),
    ("skfbnn SGHMC matched / BlackJAX SGHMC", SKFBNN_SGHMC, BLACKJAX_SGHMC),
    ("skfbnn SGLD matched / posteriors SGLD", SKFBNN_SGLD, POSTERIORS_SGLD),
    ("skfbnn SGLD defaults / torch forward + backward", SKFBNN_DEFAULTS, TORCH_GRAD),
    ("skfbnn SGLD matched / torch forward + backward", SKFBNN_SGLD, TORCH_GRAD),
    ("skfbnn SGHMC matched / torch forward + backward", SKFBNN_SGHMC, TORCH_GRAD),
    ("torch / JAX forward + backward", TORCH_GRAD, JAX_GRAD),
    ("skfbnn SGLD matched / torch SGLD step in a CUDA graph", SKFBNN_SGLD, TORCH_SGLD_GRAPH),
    ("torch SGLD step in a CUDA graph / BlackJAX SGLD (lax.scan)", TORCH_SGLD_GRAPH,
     BLACKJAX_SGLD_SCAN),
)


class Problem(NamedTuple):
    """The standardised rows in float32 and the update step."""

    X: np.ndarray  # (n, d) float32
    y: np.ndarray  # (n, 1) float32, standardised
    eps: float  # the update step, STEP_SIZE / n


class Config(NamedTuple):
    """One cell of the table: ``warm()`` runs it untimed (compiling what it compiles),
    ``time(k, seed)`` returns seconds per step."""

    row: str
    chains: int
    warm: Callable[[], None]
    time: Callable[[int, int], float]


def matched_params(y: np.ndarray) -> dict:
    """The skfbnn parameters that leave the peers' work per step (see the module docstring)."""
    return dict(prior_std=PRIOR_STD, noise_std=NOISE * float(np.std(y)),
                preconditioner="identity", schedule="constant", step_size=STEP_SIZE)


def initial_params(chains: int, d: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 starting weights ``(chains, ...)``: ``N(0, 1 / fan_in)`` weights, zero biases."""
    rng = np.random.default_rng(seed)
    return {"W1": rng.normal(0, d**-0.5, (chains, d, HIDDEN)).astype(np.float32),
            "b1": np.zeros((chains, HIDDEN), np.float32),
            "W2": rng.normal(0, HIDDEN**-0.5, (chains, HIDDEN, 1)).astype(np.float32),
            "b2": np.zeros((chains, 1), np.float32)}


_LOG_CONST = math.log(NOISE) + 0.5 * math.log(2 * math.pi)


# -- skfbnn --------------------------------------------------------------------------------

def skfbnn_configs(X, y, chains: int, clock, device: str = "cpu") -> list[Config]:
    """The three skfbnn rows for ``chains`` chains on ``device``, timed as ``speed.py steps``
    does (a fit ends with its draws read back, so no device work is left out)."""
    from speed import fit_seconds, sampler_maker, step_slope

    common = dict(n_chains=chains, batch_size=BATCH, device=device)
    makers = {
        SKFBNN_DEFAULTS: sampler_maker("SGLDRegressor", **common),
        SKFBNN_SGLD: sampler_maker("SGLDRegressor", **common, **matched_params(y)),
        SKFBNN_SGHMC: sampler_maker("SGHMCRegressor", **common, **matched_params(y),
                                    n_leapfrog=None, friction=FRICTION),
    }
    def warm(make) -> None:  # imports and first-call set-up
        fit_seconds(make(5, 0), X, y)

    return [Config(row, chains, lambda make=make: warm(make),
                   lambda k, seed, make=make: step_slope(make, k, seed, X, y, clock))
            for row, make in makers.items()]


# -- JAX and BlackJAX ----------------------------------------------------------------------

def _jax_pieces(problem: Problem):
    """The network, the per-chain log posterior on a minibatch and its two halves for
    BlackJAX's gradient estimator (log prior; log-likelihood of one row)."""
    import jax
    import jax.numpy as jnp

    n = len(problem.X)

    def forward(p, x):
        return jnp.tanh(x @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]

    def log_prior(p):
        return sum(-0.5 * jnp.sum(jnp.square(v / PRIOR_STD)) for v in jax.tree.leaves(p))

    def log_lik_row(p, row):
        x, y = row
        return jnp.sum(-0.5 * jnp.square((y - forward(p, x)) / NOISE) - _LOG_CONST)

    def log_posterior(p, x, y):
        loglik = jnp.sum(-0.5 * jnp.square((y - forward(p, x)) / NOISE) - _LOG_CONST)
        return (n / x.shape[0]) * loglik + log_prior(p)

    return log_prior, log_lik_row, log_posterior


def _draw_rows(key, problem: Problem, X, y):
    """One chain's minibatch: ``BATCH`` rows drawn with replacement."""
    import jax

    idx = jax.random.randint(key, (BATCH,), 0, len(problem.X))
    return X[idx], y[idx]


def _timed_loop(step, state, clock):
    """``time(k, seed)`` of a Python loop of ``state = step(state)``, waited for at the end;
    the state carries over from block to block."""
    import jax

    holder = [state]

    def time_block(k: int, seed: int) -> float:
        state = holder[0]
        gc.collect()
        start = clock()
        for _ in range(k):
            state = step(state)
        jax.block_until_ready(state)
        seconds = clock() - start
        holder[0] = state
        return seconds / k

    return time_block


def blackjax_sgld(problem: Problem, chains: int, clock, scan: bool) -> tuple[Callable, Callable]:
    """BlackJAX SGLD over ``chains`` chains, stepped in a Python loop or inside
    ``lax.scan``: ``(warm(k), time(k, seed))``."""
    import blackjax
    import jax
    import jax.numpy as jnp

    log_prior, log_lik_row, _ = _jax_pieces(problem)
    X, y = jnp.asarray(problem.X), jnp.asarray(problem.y)
    sgld = blackjax.sgld(blackjax.sgmcmc.gradients.grad_estimator(
        log_prior, log_lik_row, len(problem.X)))

    def chain_step(key, position):
        rows_key, noise_key = jax.random.split(key)
        return sgld.step(noise_key, position, _draw_rows(rows_key, problem, X, y),
                         problem.eps)

    def step(key, positions):
        key, sub = jax.random.split(key)
        return key, jax.vmap(chain_step)(jax.random.split(sub, chains), positions)

    start = (jax.random.key(0), jax.tree.map(jnp.asarray, initial_params(chains, X.shape[1])))
    if not scan:
        jitted = jax.jit(step)
        timer = _timed_loop(lambda s: jitted(*s), start, clock)
        return lambda k: timer(3, 0), timer

    @jax.jit
    def block(key, positions, keys):
        def body(positions, key):
            return step(key, positions)[1], None

        return key, jax.lax.scan(body, positions, keys)[0]

    holder = [start]

    def time_block(k: int, seed: int) -> float:
        key, positions = holder[0]
        key, sub = jax.random.split(key)
        keys = jax.random.split(sub, k)
        gc.collect()
        t0 = clock()
        state = jax.block_until_ready(block(key, positions, keys))
        seconds = clock() - t0
        holder[0] = state
        return seconds / k

    return lambda k: time_block(k, 0), time_block


def blackjax_sghmc(problem: Problem, chains: int, clock) -> tuple[Callable, Callable]:
    """BlackJAX's SGHMC integrator with the momentum carried, inside ``lax.scan``."""
    import blackjax
    import jax
    import jax.numpy as jnp

    log_prior, log_lik_row, _ = _jax_pieces(problem)
    X, y = jnp.asarray(problem.X), jnp.asarray(problem.y)
    grad = blackjax.sgmcmc.gradients.grad_estimator(log_prior, log_lik_row, len(problem.X))
    h = math.sqrt(problem.eps)  # skfbnn's v <- (1 - a) v + eta g + noise, theta <- theta + v
    integrator = blackjax.sgmcmc.diffusions.sghmc(alpha=FRICTION / h)

    def chain_step(key, position, momentum):
        rows_key, noise_key = jax.random.split(key)
        g = grad(position, _draw_rows(rows_key, problem, X, y))
        return integrator(noise_key, position, momentum, g, h)

    @jax.jit
    def block(positions, momenta, keys):
        def body(carry, key):
            return jax.vmap(chain_step)(jax.random.split(key, chains), *carry), None

        return jax.lax.scan(body, (positions, momenta), keys)[0]

    positions = jax.tree.map(jnp.asarray, initial_params(chains, X.shape[1]))
    momenta = jax.tree.map(jnp.zeros_like, positions)
    holder = [(jax.random.key(1), positions, momenta)]

    def time_block(k: int, seed: int) -> float:
        key, positions, momenta = holder[0]
        key, sub = jax.random.split(key)
        keys = jax.random.split(sub, k)
        gc.collect()
        t0 = clock()
        positions, momenta = jax.block_until_ready(block(positions, momenta, keys))
        seconds = clock() - t0
        holder[0] = (key, positions, momenta)
        return seconds / k

    return lambda k: time_block(k, 0), time_block


def jax_forward_backward(problem: Problem, chains: int, clock) -> tuple[Callable, Callable]:
    """Jitted ``value_and_grad`` of the log posterior, vmapped over chains, on a fixed
    minibatch per chain; every call waited for."""
    import jax
    import jax.numpy as jnp

    _, _, log_posterior = _jax_pieces(problem)
    X, y = jnp.asarray(problem.X), jnp.asarray(problem.y)
    keys = jax.random.split(jax.random.key(2), chains)
    xb, yb = jax.vmap(lambda key: _draw_rows(key, problem, X, y))(keys)
    fn = jax.jit(jax.vmap(jax.value_and_grad(log_posterior)))
    params = jax.tree.map(jnp.asarray, initial_params(chains, X.shape[1]))

    def time_block(k: int, seed: int) -> float:
        gc.collect()
        t0 = clock()
        for _ in range(k):
            jax.block_until_ready(fn(params, xb, yb))
        return (clock() - t0) / k

    return lambda k: time_block(3, 0), time_block


# -- torch and posteriors ------------------------------------------------------------------

def torch_log_posterior(n_data: int):
    """``log_posterior(params, (x, y)) -> (C,)`` through batched matrix products, ``x``
    ``(C, b, d)``."""
    import torch

    def log_posterior(params, batch):
        x, y = batch
        h = torch.baddbmm(params["b1"].unsqueeze(1), x, params["W1"]).tanh()
        f = torch.baddbmm(params["b2"].unsqueeze(1), h, params["W2"])
        loglik = (-0.5 * ((y - f) / NOISE).square() - _LOG_CONST).sum((1, 2))
        prior = sum(-0.5 * (p / PRIOR_STD).square().flatten(1).sum(1) for p in params.values())
        return (n_data / x.shape[1]) * loglik + prior

    return log_posterior


def _torch_data(problem: Problem, chains: int, device: str):
    import torch

    gen = torch.Generator(device).manual_seed(3)
    X, y = torch.from_numpy(problem.X).to(device), torch.from_numpy(problem.y).to(device)
    params = {k: torch.from_numpy(v).to(device)
              for k, v in initial_params(chains, X.shape[1]).items()}

    def rows():
        idx = torch.randint(len(X), (chains, BATCH), generator=gen, device=device)
        return X[idx], y[idx]

    return params, rows


def _wait(device: str) -> None:
    """Wait for the kernels queued on ``device`` (torch runs CUDA asynchronously)."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def posteriors_sgld(problem: Problem, chains: int, clock,
                    device: str = "cpu") -> tuple[Callable, Callable]:
    """posteriors' SGLD transform, eager, on the torch log posterior (summed over chains,
    whose gradients stay separate)."""
    import posteriors

    params, rows = _torch_data(problem, chains, device)
    log_posterior = torch_log_posterior(len(problem.X))

    def summed(p, batch):
        value = log_posterior(p, batch)
        return value.sum(), value.detach()

    transform = posteriors.sgmcmc.sgld.build(summed, lr=problem.eps)
    holder = [transform.init(params)]

    def time_block(k: int, seed: int) -> float:
        state = holder[0]
        gc.collect()
        t0 = clock()
        for _ in range(k):
            state, _ = transform.update(state, rows())
        _wait(device)
        seconds = clock() - t0
        holder[0] = state
        return seconds / k

    return lambda k: time_block(3, 0), time_block


def torch_forward_backward(problem: Problem, chains: int, clock,
                           device: str = "cpu") -> tuple[Callable, Callable]:
    """Torch autograd of the log posterior on a fixed minibatch per chain."""
    import torch

    params, rows = _torch_data(problem, chains, device)
    batch = rows()
    log_posterior = torch_log_posterior(len(problem.X))

    def time_block(k: int, seed: int) -> float:
        gc.collect()
        t0 = clock()
        for _ in range(k):
            leaves = {name: v.detach().requires_grad_() for name, v in params.items()}
            torch.autograd.grad(log_posterior(leaves, batch).sum(), list(leaves.values()))
        _wait(device)
        return (clock() - t0) / k

    return lambda k: time_block(3, 0), time_block


def torch_sgld_graph(problem: Problem, chains: int, clock,
                     device: str = "cpu") -> tuple[Callable, Callable]:
    """An SGLD step written in torch (each chain's minibatch drawn with replacement, the log
    posterior's gradient, BlackJAX's update ``theta + eps * grad + sqrt(2 eps) * noise``)
    captured once as a CUDA graph and replayed: the step without a kernel launch per
    operator (a GPU only)."""
    import torch

    if not device.startswith("cuda"):
        raise NotImplementedError("a GPU only")
    X, y = torch.from_numpy(problem.X).to(device), torch.from_numpy(problem.y).to(device)
    params = {k: torch.from_numpy(v).to(device).requires_grad_(True)
              for k, v in initial_params(chains, X.shape[1]).items()}
    log_posterior, n, eps = torch_log_posterior(len(X)), len(X), problem.eps

    def step() -> None:
        idx = torch.randint(n, (chains, BATCH), device=device)
        value = log_posterior(params, (X[idx], y[idx])).sum()
        grads = torch.autograd.grad(value, list(params.values()))
        with torch.no_grad():
            for p, g in zip(params.values(), grads, strict=True):
                p.add_(eps * g + math.sqrt(2 * eps) * torch.randn_like(p))

    side = torch.cuda.Stream(device)  # warm-up off the default stream, as capture requires
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()

    def time_block(k: int, seed: int) -> float:
        gc.collect()
        _wait(device)
        t0 = clock()
        for _ in range(k):
            graph.replay()
        _wait(device)
        return (clock() - t0) / k

    return lambda k: time_block(3, 0), time_block


TORCH_PEERS = (POSTERIORS_SGLD, TORCH_GRAD, TORCH_SGLD_GRAPH)
"""The peers' rows run by torch (placed on ``--device``; JAX's follow ``JAX_PLATFORMS``)."""

PEERS = {
    BLACKJAX_SGLD: lambda p, c, clock: blackjax_sgld(p, c, clock, scan=False),
    BLACKJAX_SGLD_SCAN: lambda p, c, clock: blackjax_sgld(p, c, clock, scan=True),
    BLACKJAX_SGHMC: blackjax_sghmc,
    POSTERIORS_SGLD: posteriors_sgld,
    JAX_GRAD: jax_forward_backward,
    TORCH_GRAD: torch_forward_backward,
    TORCH_SGLD_GRAPH: torch_sgld_graph,
}


# -- the run -------------------------------------------------------------------------------

def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for name in ("torch", "jax", "jaxlib", "blackjax", "posteriors"):
        try:
            parts.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name} not installed")
    return ", ".join(parts)


def _jax_platform(threads: int, device: str) -> None:
    """JAX on the device the torch rows run on, and on the CPU with one thread when
    ``threads`` is 1; on a GPU it takes memory as it needs it instead of most of it up front,
    which would leave torch none (set before jax is imported; variables already set are
    kept)."""
    gpu = device.startswith("cuda")
    os.environ.setdefault("JAX_PLATFORMS", "cuda" if gpu else "cpu")
    if gpu:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    elif threads == 1 and "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")


def run(args) -> None:
    import torch
    from speed import boston, boston_sized_problem

    import skfbnn.device

    if args.device != "cpu" and args.clock == "cpu":
        raise SystemExit("--clock cpu times this process's CPU, not the GPU's queue: "
                         f"use the wall clock with --device {args.device}")
    skfbnn.device.resolve_device(args.device)  # a clear error where there is no such device

    _jax_platform(args.threads, args.device)
    torch.set_num_threads(args.threads)
    skfbnn.device.FIT_THREADS = args.threads
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    k = args.k or (50 if args.quick else 200)
    repeats = args.repeats or (2 if args.quick else 5)
    X, y = boston(args.data_home) if args.data_home else boston_sized_problem()
    ys = (y - y.mean()) / y.std()
    problem = Problem(X.astype(np.float32), ys[:, None].astype(np.float32), STEP_SIZE / len(X))

    configs: list[Config] = []
    missing: dict[str, str] = {}
    for chains in args.chains:
        configs += skfbnn_configs(X, y, chains, clock, args.device)
        for row, build in PEERS.items():
            if row in missing:
                continue
            on_device = {"device": args.device} if row in TORCH_PEERS else {}
            try:
                warm, time_block = build(problem, chains, clock, **on_device)
            except ImportError as error:
                missing[row] = f"not installed ({error.name})"
                continue
            except NotImplementedError as error:
                missing[row] = str(error)
                continue
            except RuntimeError as error:  # a capture the device refuses: say so, go on
                missing[row] = f"failed ({str(error).splitlines()[0][:80]})"
                continue
            configs.append(Config(row, chains, lambda warm=warm: warm(k), time_block))

    where = (f"{torch.cuda.get_device_name(args.device)} (skfbnn, torch and posteriors; JAX on "
             f"{os.environ['JAX_PLATFORMS']}), " if args.device.startswith("cuda") else "")
    print(f"{_versions()}; {where}{platform.processor() or platform.machine()}, {args.threads} "
          f"thread(s); problem {X.shape} ({'Boston split 0' if args.data_home else 'synthetic'}"
          f"), 13-{HIDDEN}-1 tanh, float32, {BATCH} rows per chain per step; k = {k}, "
          f"repeats = {repeats}, {args.clock} time", flush=True)
    for config in configs:  # warm-up, compilation included, not timed
        config.warm()
    times: dict[tuple[str, int], list[float]] = {(c.row, c.chains): [] for c in configs}
    for r in range(repeats):
        order = configs if r % 2 == 0 else configs[::-1]
        for config in order:
            times[config.row, config.chains].append(config.time(k, r))
        print(f"round {r}: " + ", ".join(f"{row} ({c}) {1e6 * v[-1]:.0f}"
                                        for (row, c), v in times.items()), flush=True)

    def cell(row: str, chains: int) -> str:
        if row in missing:
            return missing[row]
        values = times.get((row, chains))
        return f"{1e6 * np.median(values):.0f}" if values else "-"

    heads = [f"{c} chain{'s' if c > 1 else ''}" for c in args.chains]
    print("\n| µs per step (median over rounds) | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(heads))
    for row in ROWS:
        print(f"| {row} | " + " | ".join(cell(row, c) for c in args.chains) + " |")
    print("\n| ratio (median over rounds; range) | " + " | ".join(heads) + " |")
    print("|---|" + "---|" * len(heads))
    for text, num, den in RATIOS:
        cells = []
        for c in args.chains:
            if (num, c) in times and (den, c) in times:
                ratios = np.asarray(times[num, c]) / np.asarray(times[den, c])
                cells.append(f"{np.median(ratios):.2f} ({ratios.min():.2f}-{ratios.max():.2f})")
            else:
                cells.append("-")
        print(f"| {text} | " + " | ".join(cells) + " |")


def add_arguments(p) -> None:
    """The ``peers`` subcommand's options."""
    p.add_argument("--quick", action="store_true", help="k = 50, two repeats")
    p.add_argument("--k", type=int, default=None,
                   help="steps per timed block (skfbnn: fits of k and 2k steps; default 200)")
    p.add_argument("--repeats", type=int, default=None, help="rounds (default 5; --quick: 2)")
    p.add_argument("--chains", type=int, nargs="+", default=[1, 8])
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (and, at 1, XLA on one thread)")
    p.add_argument("--data-home", default=None,
                   help="time on Boston's split 0 from this UCI folder instead of synthetic rows")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall time, or this process's CPU time (the CPU only)")
    p.add_argument("--device", default="cpu",
                   help="where skfbnn, torch and posteriors run, and JAX with them: cpu, or "
                        "cuda on a machine with a GPU (wall time)")
