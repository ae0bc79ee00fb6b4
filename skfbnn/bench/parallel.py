"""Run benchmark cells serially, on joblib workers, or on a Dask cluster.

Every cell runs through :func:`call_limited`, which caps torch's intra-op
threads and the BLAS/OpenMP pools (threadpoolctl) at ``threads`` for the call,
in the parent process as in a worker. A cell's result depends only on the cell
(its seeds are part of it), so a grid gives the same records serially, with
``n_jobs`` joblib workers and on Dask; results come back in cell order in all
three modes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["call_limited", "map_cells", "dask_client"]


def call_limited(fn: Callable[[Any], Any], item: Any, threads: int = 1) -> Any:
    """``fn(item)`` with torch and the native thread pools limited to ``threads``.

    Examples
    --------
    >>> import torch
    >>> call_limited(lambda _: torch.get_num_threads(), None, threads=1)
    1
    """
    import torch
    from threadpoolctl import threadpool_limits

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(limits=threads):
            return fn(item)
    finally:
        torch.set_num_threads(previous)


def _check(n_jobs: int, scheduler: str | None, threads: int) -> None:
    if not (isinstance(n_jobs, int) and (n_jobs >= 1 or n_jobs == -1)):
        raise ValueError(f"n_jobs must be a positive int or -1. Got {n_jobs!r}.")
    if not (isinstance(threads, int) and threads >= 1):
        raise ValueError(f"threads must be a positive int. Got {threads!r}.")
    if scheduler is not None and not (isinstance(scheduler, str) and scheduler):
        raise ValueError(f"scheduler must be 'local' or a scheduler address. Got {scheduler!r}.")


def dask_client(scheduler: str, n_workers: int = 2, threads: int = 1):
    """A ``dask.distributed.Client``: a new ``LocalCluster`` for ``"local"`` (``n_workers``
    worker processes on the loopback interface, ``threads`` threads each, no dashboard),
    else a connection to the scheduler at the address ``scheduler``.

    Close the client (and for ``"local"`` its cluster, ``client.cluster``) when done.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "--scheduler needs dask.distributed: pip install 'skfbnn[dask]'") from exc
    if scheduler == "local":
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=threads,
                               processes=True, host="127.0.0.1", dashboard_address=None)
        return Client(cluster)
    return Client(scheduler)


def map_cells(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    threads: int = 1,
) -> Iterator[Any]:
    """Yield ``fn(item)`` for every item, in order, computed serially or in parallel.

    Parameters
    ----------
    fn : callable
        A picklable function of one argument (e.g. a bound method of a picklable
        task object).
    items : sequence
        The cells.
    n_jobs : int, default=1
        Joblib worker processes (``-1``: one per core); 1 runs in this process.
        With ``scheduler="local"`` the number of Dask workers.
    scheduler : str or None, default=None
        None: joblib (or serial). ``"local"``: a ``dask.distributed.LocalCluster``
        started for this call; otherwise the address of a running Dask scheduler
        (``"tcp://host:8786"``).
    threads : int, default=1
        torch and BLAS threads per cell.

    Examples
    --------
    >>> list(map_cells(abs, [-1, 2, -3]))
    [1, 2, 3]
    """
    _check(n_jobs, scheduler, threads)
    items = list(items)
    if scheduler is not None:
        yield from _dask_map(fn, items, scheduler, n_jobs, threads)
    elif n_jobs == 1 or len(items) <= 1:
        for item in items:
            yield call_limited(fn, item, threads)
    else:
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        yield from parallel(delayed(call_limited)(fn, item, threads) for item in items)


def _dask_map(fn, items, scheduler, n_jobs, threads):
    n_workers = n_jobs if n_jobs >= 1 else 2
    client = dask_client(scheduler, n_workers=n_workers, threads=threads)
    try:
        futures = client.map(call_limited, [fn] * len(items), items,
                             [threads] * len(items), pure=False)
        for future in futures:  # in order; later ones keep running meanwhile
            yield future.result()
    finally:
        cluster = client.cluster if scheduler == "local" else None
        client.close()
        if cluster is not None:
            cluster.close()
