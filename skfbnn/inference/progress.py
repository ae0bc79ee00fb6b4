"""Progress reporting of a run: a tqdm bar and log lines, owned by the driver's caller."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch

__all__ = ["progress_bar"]

logger = logging.getLogger("skfbnn")


@contextmanager
def progress_bar(verbose: int, sampler: bool, n_steps: int
                 ) -> Iterator[Callable[[int, torch.Tensor], None] | None]:
    """A ``progress(step, values)`` callback for :func:`skfbnn.inference.run.run`, or None.

    The driver calls it at each read-back of the run's values (every
    :data:`~skfbnn.inference.run.SYNC_EVERY` steps or
    :data:`~skfbnn.inference.run.SYNC_SECONDS`, and at the end) with ``values`` the
    ``(k, C)`` objectives of the ``k`` steps up to ``step``, so the bar never makes a step
    wait for the device.

    Parameters
    ----------
    verbose : int
        0: None (silent); 1: a tqdm bar with the running log posterior (``sampler``) or
        objective; 2: also one log line per chain (member) every tenth of the run on the
        ``skfbnn`` logger.
    sampler : bool
        The run samples a posterior (labels say "log posterior") or optimises.
    n_steps : int
        Steps of the run.

    Examples
    --------
    >>> with progress_bar(0, True, 10) as progress:
    ...     progress is None
    True
    """
    if not verbose:
        yield None
        return
    from tqdm.auto import tqdm

    label, name = ("log_post", "log posterior") if sampler else ("objective", "objective")
    every = max(1, n_steps // 10)
    desc = "sampling" if sampler else "optimising"
    with tqdm(total=n_steps, desc=desc, leave=False) as bar:

        def progress(step: int, values: torch.Tensor) -> None:
            bar.update(len(values))
            bar.set_postfix({label: f"{float(values[-1].mean()):.4g}"})
            if verbose < 2:
                return
            first = step + 1 - len(values)  # the step of values[0]
            for done in range((first // every + 1) * every, step + 2, every):
                for chain, v in enumerate(values[done - 1 - first].tolist()):
                    logger.info("step %d chain %d %s %.6g", done, chain, name, v)

        yield progress
