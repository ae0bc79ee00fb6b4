"""skfbnn.device: device and dtype resolution, seeding, conversions, CPU threads."""

from __future__ import annotations

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
@pytest.mark.parametrize("layout", ["C", "F", "strided", "readonly"])
def test_to_tensor_copies_any_layout(layout):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    layouts = {"C": base, "F": np.asfortranarray(base), "strided": base[:, ::2]}
    a = layouts.get(layout, base)
    if layout == "readonly":
        a = base.copy()
        a.setflags(write=False)
    t = to_tensor(a, torch.device("cpu"), torch.float32)
    assert t.dtype == torch.float32 and t.device.type == "cpu"
    assert t.shape == a.shape
    assert np.array_equal(t.numpy(), a.astype(np.float32))
    t += 1  # a copy: the array is not modified
    assert np.array_equal(a, {"strided": base[:, ::2]}.get(layout, base))


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
