"""Every numeric setting's one range, shared by the command line, the library, the app's widgets and its links.

`RANGES` maps a setting to its closed range and whether it is an integer; `check(name, value)` refuses anything
outside it with one sentence naming the setting (InputError). The command line checks its options with it, the
library its arguments (each range's constants live beside the rule that needs them), and the app takes its widgets'
limits and its links' bounds from it (ui.params.PARAMS), so a value one surface takes no other refuses. Seeds stop at
2^53 - 1, the largest integer a number widget (a JavaScript number) holds exactly, on every surface.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.data.spec import MAX_SAMPLE_ROWS, MIN_SAMPLE_ROWS
from core.data.synthetic import MAX_D, MAX_ROWS, MAX_SCALE
from core.errors import MAX_SEED, InputError, is_integer, is_real
from core.estimator.model import MAX_LAM_REG, MAX_RESPONSE_BOUND, MIN_RESPONSE_BOUND
from core.mechanisms.release import MAX_LEVEL, MIN_LEVEL
from core.privacy.accounting import MAX_WEIGHT, MIN_WEIGHT
from core.privacy.gaussian import MAX_DELTA, MAX_EPSILON, MIN_DELTA, MIN_EPSILON

MAX_TRIALS = 500  # Compare's draws per method


@dataclass(frozen=True)
class Range:
    """A setting's closed range [low, high], whether it takes integers only, and its name in words."""

    low: float
    high: float
    integer: bool
    words: str

    def holds(self, value: object) -> bool:
        """Whether value is a number of the right kind (never a bool) inside the range."""
        kind = is_integer(value) if self.integer else is_real(value)
        return kind and self.low <= value <= self.high  # type: ignore[operator]


RANGES: dict[str, Range] = {
    "epsilon": Range(MIN_EPSILON, MAX_EPSILON, False, "the total ε"),
    "delta": Range(MIN_DELTA, MAX_DELTA, False, "the total δ"),
    "split": Range(MIN_WEIGHT, MAX_WEIGHT, False, "each split weight"),
    "level": Range(MIN_LEVEL, MAX_LEVEL, False, "the interval level"),
    "seed": Range(0, MAX_SEED, True, "a seed"),
    "n": Range(2, MAX_ROWS, True, "the sample size n"),
    "d": Range(1, MAX_D, True, "the dimension d"),
    "scale": Range(0.0, MAX_SCALE, False, "a synthetic scale (‖θ*‖, the noise)"),
    "lam_reg": Range(0.0, MAX_LAM_REG, False, "λ_reg"),
    "response_bound": Range(MIN_RESPONSE_BOUND, MAX_RESPONSE_BOUND, False, "the response bound"),
    "trials": Range(1, MAX_TRIALS, True, "the number of draws per method"),
    "census_sample": Range(MIN_SAMPLE_ROWS, MAX_SAMPLE_ROWS, True, "the records per state of a SYNTHETIC sample"),
}


def check(name: str, value: object, where: str | None = None) -> None:
    """InputError unless value lies in the range of setting `name`; where names the control (e.g. "--level")."""
    r = RANGES[name]
    if not r.holds(value):
        kind = "an integer" if r.integer else "a number"
        raise InputError(f"{where or r.words} must be {kind} from {r.low:g} to {r.high:g}, got {value!r}")
