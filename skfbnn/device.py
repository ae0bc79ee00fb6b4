"""Device, dtype, random-number and array-conversion handling (the only place for it).

Every other module receives an explicit :class:`torch.device`, ``dtype`` and
:class:`torch.Generator`; nothing in skfbnn touches the global torch RNG.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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
    "threads_for_work",
    "FIT_THREADS",
    "PARALLEL_WORK",
    "torch_state_kept",
]

FIT_THREADS: int | None = None
"""torch CPU threads inside ``fit`` and prediction. None (the default): one thread, and
for the run of a fit whose steps compute at least :data:`PARALLEL_WORK` values every
thread torch had when the fit began (:func:`threads_for_work`); an integer: that many
throughout. One thread for small steps: on an idle 2-core machine a second thread left an
eight-chain SGLD step of the default MLP on 256 rows 4-28% slower and a CNN1d step 0-10%
faster, and two fits at once ran 4.3x slower with two threads each; a full-batch pCNL step
on protein's 41 157 rows ran 1.45-1.7x faster on two (the devices page, "Threads")."""

PARALLEL_WORK = 2**24
"""Values a step computes (rows per step x parameter sets x the values a row makes through
the network, :func:`skfbnn.nn.functional.forward_values`) from which a fit's run uses
every thread (:data:`FIT_THREADS` None): 16.8 million, between a CNN1d step on 256 rows with
8 chains (3.7 million, no gain measured) and a pCNL step on protein (33 million)."""

_THREADS_OUTSIDE: ContextVar[int | None] = ContextVar("threads_outside", default=None)

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


def spawn_seed(random_state: None | int | np.random.RandomState, continued: int = 0) -> int:
    """Draw one integer seed from a scikit-learn ``random_state``.

    ``continued`` counts the warm-started fits before this one (``warm_start``): the
    ``k``-th continuation gets a seed of its own, derived from the first fit's and ``k``,
    so that a run continued from a previous fit draws fresh noise and minibatches rather
    than repeating the previous fit's (with an integer ``random_state`` the stream would
    otherwise restart identically at every fit), and the whole sequence of fits is still
    reproducible.

    Examples
    --------
    >>> spawn_seed(0) == spawn_seed(0), spawn_seed(0) == spawn_seed(0, continued=1)
    (True, False)
    >>> spawn_seed(0, continued=1) == spawn_seed(0, continued=1)
    True
    """
    seed = int(check_random_state(random_state).randint(0, 2**31 - 1))
    if not continued:
        return seed
    state = np.random.SeedSequence([seed, int(continued)]).generate_state(1)[0]
    return int(state) & (2**31 - 1)


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
    """Run torch CPU ops on ``n_threads`` threads (default :data:`FIT_THREADS`, one when
    that is None) inside the block, then restore; :func:`threads_for_work` inside the
    block raises them for a large run.

    Sampler steps on small networks are dominated by per-op overhead; extra
    intra-op threads only add contention (measured: 350 SGLD steps took 7.4 s
    with 2 threads on a loaded 2-core machine and 0.39 s with 1; 100 GP
    marginal-likelihood steps on 442 points 31 s and 4 s). Nothing is changed
    for GPU devices.
    """
    if device.type != "cpu":
        yield
        return
    previous, token = torch.get_num_threads(), None
    try:  # an interrupt anywhere in here leaves neither the threads nor the variable set
        token = _THREADS_OUTSIDE.set(None if n_threads is not None or FIT_THREADS is not None
                                     else previous)
        torch.set_num_threads(n_threads or FIT_THREADS or 1)
        yield
    finally:
        if token is not None:
            _THREADS_OUTSIDE.reset(token)
        torch.set_num_threads(previous)


def threads_for_work(values_per_step: int) -> int:
    """Inside :func:`cpu_threads` with :data:`FIT_THREADS` None: use every thread torch had
    before the block (its ``torch.get_num_threads()``, the user's setting or torch's default)
    when a step computes at least :data:`PARALLEL_WORK` values, else one. Returns the
    threads now in use; outside such a block (a GPU, a set thread count) nothing changes.

    Examples
    --------
    >>> import torch
    >>> with cpu_threads(torch.device("cpu")):
    ...     small = threads_for_work(256 * 8 * 100)
    ...     large = threads_for_work(41157 * 4 * 201)
    >>> small, large == torch.get_num_threads()
    (1, True)
    """
    outside = _THREADS_OUTSIDE.get()
    if outside is not None:
        torch.set_num_threads(outside if values_per_step >= PARALLEL_WORK else 1)
    return torch.get_num_threads()


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

