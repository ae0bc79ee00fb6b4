"""skfbnn.device: device and dtype resolution, seeding, conversions, CPU threads."""

from __future__ import annotations

import linecache
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from skfbnn import device as dev
from skfbnn.device import (
    cpu_threads,
    float64_device,
    make_generator,
    resolve_device,
    resolve_dtype,
    spawn_seed,
    to_numpy,
    to_tensor,
)


def _fake_accelerators(monkeypatch, cuda=0, mps=False):
    """Pretend ``cuda`` CUDA devices and (no) MPS are available."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)


# ------------------------------------------------------------ resolve_device
@pytest.mark.parametrize("spec", ["cpu", torch.device("cpu")])
def test_resolve_cpu(spec):
    assert resolve_device(spec) == torch.device("cpu")


@pytest.mark.parametrize(
    "cuda, mps, expected", [(0, False, "cpu"), (1, False, "cuda"), (0, True, "mps"),
                            (2, True, "cuda")],
)
def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    _fake_accelerators(monkeypatch, cuda=cuda, mps=mps)
    assert resolve_device("auto").type == expected
    assert resolve_device().type == expected


def test_auto_without_accelerators_is_cpu_on_this_machine():
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("an accelerator is present")
    assert resolve_device("auto") == torch.device("cpu")


def test_unavailable_cuda_raises(monkeypatch):
    _fake_accelerators(monkeypatch, cuda=0)
    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device(torch.device("cuda", 0))


def test_cuda_index_out_of_range_raises(monkeypatch):
    _fake_accelerators(monkeypatch, cuda=1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    assert resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ValueError, match="only 1 CUDA device"):
        resolve_device("cuda:3")


def test_unavailable_mps_raises(monkeypatch):
    _fake_accelerators(monkeypatch, mps=False)
    with pytest.raises(ValueError, match="MPS is not available"):
        resolve_device("mps")


@pytest.mark.parametrize(
    "spec", ["tpu", "bogus", "", "cpu:x", torch.device("meta"), 3.5]
)
def test_unknown_device_raises_value_error(spec):
    with pytest.raises(ValueError, match="device") as excinfo:
        resolve_device(spec)
    assert type(excinfo.value) is ValueError  # not torch's RuntimeError


def test_float64_device():
    assert float64_device(torch.device("mps")) == torch.device("cpu")
    assert float64_device(torch.device("cpu")) == torch.device("cpu")
    assert float64_device(torch.device("cuda", 1)) == torch.device("cuda", 1)


# ------------------------------------------------------------- resolve_dtype
def test_resolve_dtype():
    assert resolve_dtype("float32") is torch.float32
    assert resolve_dtype("float64") is torch.float64
    for bad in ("float16", "double", "bogus"):
        with pytest.raises(ValueError, match="dtype"):
            resolve_dtype(bad)


# ------------------------------------------------------------------ seeding
def test_spawn_seed():
    seed = spawn_seed(0)
    assert isinstance(seed, int) and 0 <= seed < 2**31 - 1
    assert spawn_seed(0) == seed
    assert spawn_seed(1) != seed
    rs = np.random.RandomState(0)
    assert spawn_seed(rs) == seed  # same stream as the int seed ...
    assert spawn_seed(rs) != seed  # ... and the RandomState advances
    np.random.seed(3)
    first = spawn_seed(None)
    np.random.seed(3)
    assert spawn_seed(None) == first  # None draws from numpy's global RNG


def test_make_generator_is_local_and_seeded():
    state = torch.get_rng_state()
    a = torch.rand(5, generator=make_generator(42, torch.device("cpu")))
    b = torch.rand(5, generator=make_generator(42, torch.device("cpu")))
    c = torch.rand(5, generator=make_generator(43, torch.device("cpu")))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert make_generator(1, torch.device("cpu")).device == torch.device("cpu")
    assert torch.equal(torch.get_rng_state(), state)


# -------------------------------------------------------------- conversions
@pytest.mark.parametrize("layout", ["C", "F", "strided", "reversed", "readonly"])
def test_to_tensor_copies_any_layout(layout):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    layouts = {"C": base, "F": np.asfortranarray(base), "strided": base[:, ::2],
               "reversed": base[::-1, ::-2]}
    a = layouts.get(layout, base)
    if layout == "readonly":
        a = base.copy()
        a.setflags(write=False)
    t = to_tensor(a, torch.device("cpu"), torch.float32)
    assert t.dtype == torch.float32 and t.device.type == "cpu"
    assert t.shape == a.shape
    assert np.array_equal(t.numpy(), a.astype(np.float32))
    t += 1  # a copy: the array is not modified
    assert np.array_equal(a, base.copy()[{"strided": (slice(None), slice(None, None, 2)),
                                          "reversed": (slice(None, None, -1),
                                                       slice(None, None, -2))}
                                         .get(layout, ...)])


def test_to_numpy():
    t = torch.linspace(0, 1, 5, dtype=torch.float32, requires_grad=True) * 2
    a = to_numpy(t)
    assert isinstance(a, np.ndarray) and a.dtype == np.float64
    np.testing.assert_allclose(a, np.linspace(0, 2, 5), rtol=1e-6)
    assert to_numpy(torch.ones(2, 3, dtype=torch.float64)).shape == (2, 3)


# -------------------------------------------------------------- cpu_threads
def test_cpu_threads_sets_and_restores():
    before = torch.get_num_threads()
    with cpu_threads(torch.device("cpu")):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with cpu_threads(torch.device("cpu"), n_threads=2):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before


def test_cpu_threads_default_is_fit_threads(monkeypatch):
    before = torch.get_num_threads()
    monkeypatch.setattr(dev, "FIT_THREADS", 2)
    with cpu_threads(torch.device("cpu")):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before


def test_threads_for_work_uses_every_thread_only_for_large_steps(monkeypatch):
    monkeypatch.setattr(dev, "FIT_THREADS", None)  # the default, whatever ran before
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # the user's setting: what a large run may use
    try:
        with cpu_threads(torch.device("cpu")):
            assert torch.get_num_threads() == 1
            assert dev.threads_for_work(dev.PARALLEL_WORK - 1) == 1
            assert dev.threads_for_work(dev.PARALLEL_WORK) == 2 == torch.get_num_threads()
            assert dev.threads_for_work(0) == 1
        assert torch.get_num_threads() == 2
        monkeypatch.setattr(dev, "FIT_THREADS", 1)  # a set count holds for any work
        with cpu_threads(torch.device("cpu")):
            assert dev.threads_for_work(10 * dev.PARALLEL_WORK) == 1
        with cpu_threads(torch.device("cpu"), n_threads=1):
            assert dev.threads_for_work(10 * dev.PARALLEL_WORK) == 1
        assert dev.threads_for_work(10 * dev.PARALLEL_WORK) == 2  # outside: no change
    finally:
        torch.set_num_threads(before)


def test_cpu_threads_restores_after_an_exception():
    before = torch.get_num_threads()
    with pytest.raises(KeyError):
        with cpu_threads(torch.device("cpu")):
            raise KeyError("boom")
    assert torch.get_num_threads() == before


def test_cpu_threads_leaves_accelerators_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(dev.torch, "set_num_threads", lambda n: calls.append(n))
    with cpu_threads(torch.device("cuda")):
        pass
    assert calls == []


# ------------------------------------------------------------ interrupted fits
_PACKAGE = str(Path(dev.__file__).resolve().parent) + os.sep
_GRAD_MODE = {str(Path(torch.__file__).resolve().parent / "autograd" / "grad_mode.py"),
              str(Path(torch.__file__).resolve().parent / "utils" / "_contextlib.py")}
"""torch's grad-mode context managers and decorators: an interrupt inside their ``__enter__``
(autograd already switched, the caller's ``with`` not yet entered) is the dangerous one."""


class _Interrupt:
    """A ``sys.settrace`` tracer counting line events in skfbnn's frames and torch's
    grad-mode code (never in :func:`~skfbnn.device.torch_state_kept`'s own frame, whose
    restoring code it guards), and the returns of that code's ``__enter__``, and raising
    ``KeyboardInterrupt`` at the ``at``-th; with ``at=None`` it only records where each
    event is. An interrupt as ``__enter__`` returns is the one a signal can deliver between
    a ``with torch.no_grad():`` switching autograd off and the block being entered: the
    block's ``__exit__`` then never runs."""

    def __init__(self, at=None):
        self.at, self.count, self.where = at, 0, []

    def __call__(self, frame, event, arg):
        name = frame.f_code.co_filename
        if frame.f_code.co_name == "torch_state_kept" or not (
                name.startswith(_PACKAGE) or name in _GRAD_MODE):
            return None
        return self._line

    def _line(self, frame, event, arg):
        name = frame.f_code.co_filename
        if event == "line" or (event == "return" and frame.f_code.co_name == "__enter__"
                               and name in _GRAD_MODE):
            self.count += 1
            if self.at is None:
                self.where.append((name, frame.f_lineno if event == "line" else "enter"))
            elif self.count == self.at:
                raise KeyboardInterrupt(f"test interrupt at event {self.at}")
        return self._line


def _traced_fit(estimator, X, y, tracer):
    sys.settrace(tracer)
    try:
        estimator.fit(X, y)
    finally:
        sys.settrace(None)


def _interrupt_points(where, n_spread=6, n_grad=4):
    """Events to interrupt at: ``n_spread`` spread over the fit, ``n_grad`` inside torch's
    grad-mode code and its last six events there, ``n_grad`` returns of its
    ``__enter__``, and the first time each line of skfbnn that enters a
    ``no_grad`` / ``enable_grad`` / ``inference_mode`` block runs (and the event after it,
    the first line inside the block). Also returns how many distinct ``no_grad`` lines
    of skfbnn the fit ran."""
    n = len(where)
    points = set(np.linspace(1, n, n_spread).round().astype(int).tolist())
    grad = [i + 1 for i, (name, _) in enumerate(where) if name in _GRAD_MODE]
    points.update(grad[:: max(1, len(grad) // n_grad)][:n_grad])
    points.update(grad[-6:])  # the fit's last exits, e.g. torch_state_kept's enable_grad
    entered = [i + 1 for i, (_, number) in enumerate(where) if number == "enter"]
    points.update(entered[:: max(1, len(entered) // n_grad)][:n_grad])
    seen, no_grad = set(), 0
    for i, (name, number) in enumerate(where):
        if not name.startswith(_PACKAGE) or (name, number) in seen or number == "enter":
            continue
        seen.add((name, number))
        text = linecache.getline(name, number)
        if "with torch.no_grad()" in text or "@torch.no_grad()" in text:
            no_grad += 1
        if "no_grad" in text or "enable_grad" in text or "inference_mode" in text:
            points.update({i + 1, i + 2})
    return sorted(p for p in points if p <= n), no_grad


def _fit_cases():
    import skfbnn

    fast = dict(n_chains=2, n_burnin=12, n_samples=3, thinning=2)
    return [
        (skfbnn.SGLDRegressor, dict(fast, min_epochs=0), "regression"),
        (skfbnn.PCNRegressor, dict(fast, hidden_layer_sizes=(8,), noise_std="learn"),
         "regression"),
        (skfbnn.MALAClassifier, dict(fast, hidden_layer_sizes=(8,)), "classification"),
        (skfbnn.BBBClassifier, dict(n_iter=12, n_samples=4), "classification"),
        (skfbnn.DeepEnsembleRegressor, dict(n_estimators=2, n_iter=12, min_epochs=0),
         "regression"),
        (skfbnn.IFBNNRegressor, dict(n_iter=12, n_samples=4, prior_fit_iter=2,
                                     n_measurement_points=6), "regression"),
    ]


def test_interrupted_fits_leave_torch_state_as_found():
    """A ``KeyboardInterrupt`` at many points of tiny fits of every family (spread over the
    fit, inside torch's grad-mode ``__enter__``/``__exit__``, and the first time each of the
    package's ``with torch.no_grad():`` / ``enable_grad`` lines runs, e.g. the
    Metropolis-Hastings kernel's) leaves grad mode, the number of CPU threads and the
    default dtype as they were, every other fit from inside a caller's ``torch.no_grad()``;
    fits then still work."""
    import warnings

    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=24)
    labels = (y > 0).astype(int)
    threads, dtype = torch.get_num_threads(), torch.get_default_dtype()
    outside = 3  # not what a fit sets (one thread for these tiny steps), so a leak shows
    torch.set_num_threads(outside)
    torch.set_default_dtype(torch.float64)  # nor the float32 of the fits
    interrupted, no_grad_lines = 0, 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for cls, kwargs, task in _fit_cases():
                target = y if task == "regression" else labels
                recorder = _Interrupt()
                _traced_fit(cls(random_state=0, **kwargs), X, target, recorder)
                points, lines = _interrupt_points(recorder.where)
                no_grad_lines += lines
                for i, at in enumerate(points):
                    outer = bool(i % 2)
                    with torch.set_grad_enabled(outer):
                        with pytest.raises(KeyboardInterrupt):
                            _traced_fit(cls(random_state=0, **kwargs), X, target,
                                        _Interrupt(at))
                        state = (torch.is_grad_enabled(), torch.get_num_threads(),
                                 torch.get_default_dtype())
                    interrupted += 1
                    assert state == (outer, outside, torch.float64), \
                        (cls.__name__, at, outer, state)
                assert not torch.is_inference_mode_enabled()
                assert dev._THREADS_OUTSIDE.get() is None  # no stale choice outside a fit
            for cls, kwargs, _ in _fit_cases()[:2]:  # gradient-based fits still work
                with torch.no_grad():
                    fitted = cls(random_state=0, **kwargs).fit(X, y)
                    assert not torch.is_grad_enabled()
                assert np.isfinite(fitted.predict(X)).all()
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(dtype)
    assert interrupted > 80 and no_grad_lines >= 3
