"""Device, dtype, random-number and array-conversion handling (the only place for it).

Every other module receives an explicit :class:`torch.device`, ``dtype`` and
:class:`torch.Generator`; nothing in skfbnn touches the global torch RNG.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from sklearn.utils import check_random_state

__all__ = [
    "resolve_device",
    "float64_device",
    "resolve_dtype",
    "make_generator",
    "spawn_seed",
    "to_tensor",
    "to_numpy",
    "cpu_threads",
    "FIT_THREADS",
    "torch_state_kept",
]

FIT_THREADS = 1
"""torch CPU threads inside ``fit`` and prediction (:func:`cpu_threads`'s default). One:
a second thread made an eight-chain sampler step 9% faster on an idle 2-core machine, and
two fits running at once 3.5x slower (the benchmarks page, "Speed")."""

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """Turn a ``device=`` parameter into a :class:`torch.device`.

    ``"auto"`` picks CUDA, then MPS, then CPU. Explicit strings (``"cpu"``,
    ``"cuda"``, ``"cuda:1"``, ``"mps"``) and :class:`torch.device` objects are
    checked for availability.

    Parameters
    ----------
    device : str or torch.device, default="auto"
        The requested device.

    Returns
    -------
    torch.device

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if isinstance(device, str) and device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            "device must be 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'. "
            f"Got {device!r}."
        ) from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} requested but CUDA is not available.")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"device={device!r} requested but only {torch.cuda.device_count()} "
                "CUDA device(s) are visible."
            )
    elif dev.type == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ValueError(f"device={device!r} requested but MPS is not available.")
    elif dev.type != "cpu":
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'mps'. Got {device!r}.")
    return dev


def float64_device(device: torch.device) -> torch.device:
    """Device for float64 maths (GP priors): ``device`` unless it lacks float64 (MPS)."""
    return torch.device("cpu") if device.type == "mps" else device


def resolve_dtype(dtype: str) -> torch.dtype:
    """Map ``"float32"``/``"float64"`` to the torch dtype."""
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise ValueError(f"dtype must be 'float32' or 'float64'. Got {dtype!r}.") from None


def spawn_seed(random_state: None | int | np.random.RandomState) -> int:
    """Draw one integer seed from a scikit-learn ``random_state``."""
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def make_generator(seed: int, device: torch.device) -> torch.Generator:
    """A local :class:`torch.Generator` on ``device`` seeded with ``seed``."""
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen


def to_tensor(
    array: np.ndarray, device: torch.device, dtype: torch.dtype
) -> torch.Tensor:
    """Copy a numpy array (any memory layout, read-only or negative strides) to a tensor."""
    return torch.tensor(np.ascontiguousarray(array), dtype=dtype, device=device)


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """Detach a tensor to a float64 numpy array on the CPU."""
    return tensor.detach().to("cpu", torch.float64).numpy()


@contextmanager
def cpu_threads(device: torch.device, n_threads: int | None = None) -> Iterator[None]:
    """Run torch CPU ops on ``n_threads`` threads (default :data:`FIT_THREADS`) inside the
    block, then restore.

    Sampler steps on small networks are dominated by per-op overhead; extra
    intra-op threads only add contention (measured: 350 SGLD steps took 7.4 s
    with 2 threads on a loaded 2-core machine and 0.39 s with 1; 100 GP
    marginal-likelihood steps on 442 points 31 s and 4 s). Nothing is changed
    for GPU devices.
    """
    if device.type != "cpu":
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(FIT_THREADS if n_threads is None else n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@contextmanager
def torch_state_kept() -> Iterator[None]:
    """Run the block with autograd on (also inside a caller's ``torch.no_grad()`` or
    ``torch.inference_mode()``) and leave torch's global state as it was found: grad
    mode, default dtype and the number of CPU threads are restored on success, error and
    interrupt alike (an interrupt landing between a ``no_grad`` block's entry and its
    ``try`` would otherwise leave autograd off for the rest of the Python process).

    Examples
    --------
    >>> with torch.no_grad():
    ...     with torch_state_kept():
    ...         inside = torch.is_grad_enabled()
    ...     after = torch.is_grad_enabled()
    >>> inside, after
    (True, False)
    """
    grad, dtype, threads = torch.is_grad_enabled(), torch.get_default_dtype(), \
        torch.get_num_threads()
    try:
        with torch.inference_mode(False), torch.enable_grad():
            yield
    finally:
        torch.set_grad_enabled(grad)
        if torch.get_default_dtype() != dtype:
            torch.set_default_dtype(dtype)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

