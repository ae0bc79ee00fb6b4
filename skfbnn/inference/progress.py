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
    """A ``progress(step, value)`` callback for :func:`skfbnn.inference.run.run`, or None.

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

        def progress(step: int, value: torch.Tensor) -> None:
            bar.update(1)
            if step % 25 == 0:
                bar.set_postfix({label: f"{float(value.mean()):.4g}"})
            if verbose >= 2 and (step + 1) % every == 0:
                for chain, v in enumerate(value.tolist()):
                    logger.info("step %d chain %d %s %.6g", step + 1, chain, name, v)

        yield progress
