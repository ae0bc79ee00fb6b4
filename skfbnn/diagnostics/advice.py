"""What the messages of a fit's checks say about its likely causes, in order: the data's
scale, the step (with its multiple of the default), the run's length."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["FitAdvice"]


class FitAdvice(NamedTuple):
    """What the messages of a fit's checks say about its likely causes, in order.

    Parameters
    ----------
    step_name : str
        The step parameter (``step_size`` or ``learning_rate``).
    step : float or None
        Its value in this fit.
    default : float or None
        The estimator's default of it.
    run_name : str
        The parameter that lengthens the run (``n_iter``, ``n_burnin``).
    scale : tuple of str
        Short notes of the data-scale findings (:func:`scale_warnings`), first in the list.

    Examples
    --------
    >>> advice = FitAdvice("step_size", 300.0, 3.0, "n_burnin")
    >>> advice.step_text()
    'reduce step_size (now 300, 100 times its default 3)'
    >>> print(advice.causes())  # doctest: +NORMALIZE_WHITESPACE
    Likely causes, in order: a step too large: reduce step_size (now 300, 100 times its
    default 3); a run too short: raise n_burnin.
    """

    step_name: str = "step_size"
    step: float | None = None
    default: float | None = None
    run_name: str = "n_iter"
    scale: tuple[str, ...] = ()

    @property
    def step_above_default(self) -> bool:
        """The step is set above the estimator's default."""
        return (self.step is not None and self.default is not None and self.default > 0
                and self.step > self.default)

    def step_text(self) -> str:
        """``reduce <step_name>``, with its value and multiple when above the default."""
        if not self.step_above_default:
            return f"reduce {self.step_name}"
        return (f"reduce {self.step_name} (now {self.step:.3g}, "
                f"{self.step / self.default:.3g} times its default {self.default:.3g})")

    @property
    def step_far_below_default(self) -> bool:
        """The step is set below a tenth of the estimator's default."""
        return (self.step is not None and self.default is not None and self.default > 0
                and self.step < 0.1 * self.default)

    def causes(self, *more: str, run: bool = True) -> str:
        """The likely causes, in order: the data's scale (when found), the step (too small
        to move when set far below its default, else too large), the run's length (unless
        ``run`` is False), then ``more``.

        Examples
        --------
        >>> print(FitAdvice("step_size", 1e-6, 3.0, "n_burnin").causes(run=False))
        ... # doctest: +NORMALIZE_WHITESPACE
        Likely causes, in order: a step too small to move in this run: raise step_size (now
        1e-06, 3.33e-07 times its default 3).
        """
        if self.step_far_below_default:
            step = (f"a step too small to move in this run: raise {self.step_name} (now "
                    f"{self.step:.3g}, {self.step / self.default:.3g} times its default "
                    f"{self.default:.3g})")
        else:
            step = f"a step too large: {self.step_text()}"
        items = [*self.scale, step,
                 *([f"a run too short: raise {self.run_name}"] if run else []), *more]
        return "Likely causes, in order: " + "; ".join(items) + "."

    def measured(self) -> str:
        """What was measured that bears on a divergence: the data's scale and a step above
        its default; empty when neither."""
        found = list(self.scale)
        if self.step_above_default:
            found.append(f"{self.step_name}={self.step:.3g}, "
                         f"{self.step / self.default:.3g} times its default {self.default:.3g}")
        return ("Measured: " + "; ".join(found) + ".") if found else ""
