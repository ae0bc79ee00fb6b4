"""Step-size schedules: callables of the step index."""

from __future__ import annotations

import math

from .types import Schedule

__all__ = ["SCHEDULES", "make_schedule"]

SCHEDULES = ("constant", "decay", "cyclical")


def make_schedule(name: str, step_size: float, n_steps: int) -> Schedule:
    """Build a schedule.

    - ``"constant"``: ``step_size`` throughout.
    - ``"decay"``: ``step_size * 0.9 ** floor(10 t / n_steps)``, i.e. nine
      multiplicative 0.9 decays at equal intervals over the run (the paper's
      schedule shape), ending at 0.9**9 = 0.39 of the initial value.
    - ``"cyclical"``: cosine cycles (Zhang et al. 2020, cSG-MCMC) with
      ``max(1, n_steps // 1000)`` cycles; ``step_size`` is the peak.

    Examples
    --------
    >>> s = make_schedule("decay", 1.0, 100)
    >>> s(0), round(s(99), 4)
    (1.0, 0.3874)
    """
    if name == "constant":
        return lambda t: step_size
    if name == "decay":
        return lambda t: step_size * 0.9 ** math.floor(10 * t / max(n_steps, 1))
    if name == "cyclical":
        period = max(1, math.ceil(n_steps / max(1, n_steps // 1000)))
        return lambda t: 0.5 * step_size * (math.cos(math.pi * (t % period) / period) + 1)
    raise ValueError(f"schedule must be one of {SCHEDULES}. Got {name!r}.")
