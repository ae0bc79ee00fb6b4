"""Cost of a sampler step with a user's network against the built-in MLP, side by side.

One 8-chain SGHMC step (and SGLD, fSGLD) on 256 rows of MNIST-1D (batch = the 256 rows),
classifier at its defaults, with the built-in MLP and with :class:`skfbnn.nn.zoo.CNN1d`
(``input_shape=(1, 40)``); with ``--measurement-points M ...``, fSGLD with the CNN also at
``n_measurement_points=M`` (the default, ``"auto"``, gives 100 points on these 256 rows: every
step runs the network on 356 rows instead of 256). ``sghmc, cnn through vmap`` is the same CNN
inside a module with a forward of its own, which takes the generic ``vmap`` path instead of the
folded one of :mod:`skfbnn.nn.sequential` (the same network and initial weights). A step's time
is the slope ``(fit(2k) - fit(k)) / k`` of whole fits, so set-up and checks cancel, each fit
time the minimum over the repeats (robust to other processes on a shared machine); the
configurations alternate order between repeats.

    python benchmarks/speed.py network [--data-home DIR] [--k 30 --repeats 5]
    python benchmarks/speed.py network --measurement-points 50 25
    python benchmarks/speed.py network --jacobian    # the Jacobians of ifBNN, ifBDE, fBNN

``--jacobian`` times, instead, the generic Jacobian the linearised methods take at their
measurement points (:func:`skfbnn.nn.jacobian.forward_jacobian`, row by row) against
``jacrev`` of all rows at once, for ``CNN1d`` and ``CNN2d`` (8 sets, 100 rows, 10 outputs).
"""

from __future__ import annotations

import time


def _unfolded(n_features_in: int, n_outputs: int):
    """``CNN1d`` behind a forward of its own: the ``vmap`` path (a plain Sequential folds)."""
    from torch import nn

    from skfbnn.nn.zoo import CNN1d

    class Unfolded(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = CNN1d(n_features_in, n_outputs)

        def forward(self, x):
            return self.net(x)

    return Unfolded()


def _fit_seconds(make, n, X, y, clock=time.perf_counter) -> float:
    est = make(n)
    start = clock()
    est.fit(X, y)
    return clock() - start


def _fit_slopes(configs, X, y, args, clock) -> dict:
    """ms per step from whole fits of k and 2k steps (each fit's least time); prints them."""
    for make in configs.values():  # warm-up
        _fit_seconds(make, 3, X, y)
    times = {label: {1: [], 2: []} for label in configs}
    for r in range(args.repeats):
        for label in (list(configs) if r % 2 == 0 else list(configs)[::-1]):
            for m in (1, 2):
                times[label][m].append(_fit_seconds(configs[label], m * args.k, X, y, clock))
    step = {label: (min(t[2]) - min(t[1])) / args.k for label, t in times.items()}
    print("\n| configuration | ms / step | fit of k steps, min (s) | fit of 2k steps, min (s) |"
          "\n|---|---|---|---|")
    for label, t in times.items():
        print(f"| {label} | {1e3 * step[label]:.1f} | {min(t[1]):.2f} | {min(t[2]):.2f} |")
    return step


def _driver_steps(configs, X, y, args, clock) -> dict:
    """Seconds per step of the driver alone: each fit's run call is captured (a burn-in too
    long to end, so no hook fires) and ``k`` of its steps are timed per block, the
    configurations taking turns; the least block of each is kept; prints them."""
    import torch
    from speed import _Captured

    import skfbnn.inference.run as this
    import skfbnn.inference.sgmcmc.policy as sampling

    def capture(transform, params, X, y, gen, **kwargs):
        raise _Captured(transform, params, X, y, gen, kwargs)

    calls = {}
    sampling.run = capture
    try:
        for label, make in configs.items():
            try:
                make(10**6).fit(X, y)
            except _Captured as call:
                calls[label] = call.args
    finally:
        sampling.run = this.run

    def block(label) -> float:
        transform, params, Xt, yt, gen, kwargs = calls[label]
        start = clock()
        this.run(transform, params, Xt, yt, gen, **{**kwargs, "n_steps": args.k})
        if Xt.is_cuda:  # the driver's last read-back waits already; the step's tail too
            torch.cuda.synchronize(Xt.device)
        return (clock() - start) / args.k

    torch.set_num_threads(args.threads)  # as inside the fits (outside, torch's default)
    for label in calls:  # warm-up
        block(label)
    times = {label: [] for label in calls}
    for r in range(args.repeats):
        for label in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
            times[label].append(block(label))
    print("\n| configuration | ms / step, least block | median block |\n|---|---|---|")
    for label, t in times.items():
        print(f"| {label} | {1e3 * min(t):.1f} | {1e3 * sorted(t)[len(t) // 2]:.1f} |")
    return {label: min(t) for label, t in times.items()}


def _jacobian_times(net, shape, repeats, clock) -> tuple[float, float]:
    """Least seconds of the row-by-row Jacobian and of ``jacrev`` of all rows, alternating."""
    import torch
    from torch.func import jacrev, vmap

    from skfbnn.nn.functional import init_params, make_forward
    from skfbnn.nn.jacobian import forward_jacobian

    forward = make_forward(net, shape)
    gen = torch.Generator().manual_seed(0)
    params = init_params(net, 8, gen, device=torch.device("cpu"), dtype=torch.float32)
    X = torch.randn(100, forward.n_features, generator=gen)
    buffers = forward.buffers(X.device, X.dtype)
    whole = vmap(jacrev(lambda p, x: forward.single(p, x, buffers)), in_dims=(0, None))
    calls = {"row": lambda: forward_jacobian(forward, params, X),
             "whole": lambda: whole(params, X)}
    times = {k: [] for k in calls}
    for _ in range(repeats):
        for k, call in calls.items():
            start = clock()
            call()
            times[k].append(clock() - start)
    return min(times["row"]), min(times["whole"])


def _jacobians(args) -> None:
    """Seconds per Jacobian, row by row against all rows at once, side by side."""
    import torch

    from skfbnn.nn.zoo import CNN1d, CNN2d

    torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.clock} time, 8 sets, "
          f"100 rows, 10 outputs, float32; the least of {args.repeats} calls each")
    print("\n| network | row by row (s) | all rows at once (s) | ratio |\n|---|---|---|---|")
    for net, shape in ((CNN1d(40, 10), (1, 40)), (CNN2d(64, 10), (1, 8, 8))):
        row, all_rows = _jacobian_times(net, shape, args.repeats, clock)
        print(f"| {type(net).__name__} | {row:.3f} | {all_rows:.2f} | {all_rows / row:.0f} |")


def add_arguments(p) -> None:
    """The ``network`` subcommand's options."""
    p.add_argument("--data-home", default=None)
    p.add_argument("--k", type=int, default=30)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps-only", action="store_true",
                   help="time blocks of k driver steps of the captured run calls instead of "
                        "whole fits (no fit overhead in the noise)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall time, or this process's CPU time (with one thread, robust to "
                        "other processes taking turns on the cores)")
    p.add_argument("--measurement-points", type=int, nargs="*", default=[],
                   help="also fSGLD with the CNN at these n_measurement_points")
    p.add_argument("--device", default="cpu",
                   help="the estimators' device (cuda on a machine with a GPU; wall time)")
    p.add_argument("--jacobian", action="store_true",
                   help="time the generic Jacobian (row by row) against jacrev of all rows")


def run(args) -> None:
    if args.jacobian:
        return _jacobians(args)
    import torch

    import skfbnn
    import skfbnn.device
    from skfbnn.datasets import load_mnist1d
    from skfbnn.datasets._fetch import data_home_or_fetch
    from skfbnn.nn.zoo import CNN1d

    if args.device != "cpu" and args.clock == "cpu":
        raise SystemExit(f"--clock cpu does not time the GPU: use the wall clock with --device "
                         f"{args.device}")
    skfbnn.device.FIT_THREADS = args.threads
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    home = data_home_or_fetch(args.data_home, "mnist1d")  # no folder given: download once
    X, y, _, _ = load_mnist1d(data_home=home, return_X_y=True)
    X, y = X[:256], y[:256]
    cnn = dict(network=CNN1d, input_shape=(1, 40))
    configs = {}
    for method, cls in (("sghmc", skfbnn.SGHMCClassifier), ("sgld", skfbnn.SGLDClassifier),
                        ("fsgld", skfbnn.FunctionalSGLDClassifier)):
        for net, extra in (("mlp", {}), ("cnn", cnn)):
            prior = {"prior_fit_iter": 0} if method == "fsgld" else {}
            configs[f"{method}, {net}"] = (
                lambda n, cls=cls, extra=extra, prior=prior: cls(
                    n_burnin=n, n_samples=1, thinning=1, min_epochs=0, batch_size=256,
                    n_chains=8, random_state=0, device=args.device, **extra, **prior))
    configs["sghmc, cnn through vmap"] = (
        lambda n: skfbnn.SGHMCClassifier(
            n_burnin=n, n_samples=1, thinning=1, min_epochs=0, batch_size=256, n_chains=8,
            random_state=0, device=args.device, network=_unfolded, input_shape=(1, 40)))
    for m in args.measurement_points:
        configs[f"fsgld M={m}, cnn"] = (
            lambda n, m=m: skfbnn.FunctionalSGLDClassifier(
                n_burnin=n, n_samples=1, thinning=1, min_epochs=0, batch_size=256, n_chains=8,
                random_state=0, device=args.device, prior_fit_iter=0, n_measurement_points=m,
                **cnn))
    where = torch.cuda.get_device_name(args.device) if args.device != "cpu" else "CPU"
    print(f"torch {torch.__version__}, {where}, {args.threads} thread(s) per fit, "
          f"{args.clock} time, 256 rows of MNIST-1D, 8 chains, k = {args.k}, "
          f"repeats = {args.repeats}", flush=True)
    step = (_driver_steps if args.steps_only else _fit_slopes)(configs, X, y, args, clock)
    print("\n| ratio | value |\n|---|---|")
    for text, num, den in (("CNN / MLP, SGHMC", "sghmc, cnn", "sghmc, mlp"),
                           ("CNN through vmap / folded, SGHMC", "sghmc, cnn through vmap",
                            "sghmc, cnn"),
                           ("CNN / MLP, SGLD", "sgld, cnn", "sgld, mlp"),
                           ("fSGLD / SGLD, CNN", "fsgld, cnn", "sgld, cnn"),
                           ("fSGLD / SGLD, MLP", "fsgld, mlp", "sgld, mlp")):
        print(f"| {text} | {step[num] / step[den]:.2f} |")
    for m in args.measurement_points:
        print(f"| fSGLD M={m} / SGLD, CNN (rows {256 + m} / 256 = {(256 + m) / 256:.2f}) | "
              f"{step[f'fsgld M={m}, cnn'] / step['sgld, cnn']:.2f} |")
