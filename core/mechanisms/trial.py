"""One draw of a comparison method, and what every method draws with (core.methods.registry's runners,
core.methods.compare).

A `Trial` holds what a comparison fixes for all its methods — the problem, the direction u, the budget, the
calibration, DP-SGD's settings and the interval level — and a cache of the data-only quantities a method reuses
across its draws (a regularised fit, a warm start): never noise. A method's runner takes a Trial and returns a
function from a generator to a `Draw`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from core.estimator.problem import Problem
from core.privacy.accounting import Budget
from core.privacy.gaussian import normal_quantile

Interval = tuple[float, float]


class Draw(NamedTuple):
    """One draw of a method; interval is None for bottom and for methods that state none."""

    value: float | None
    noise_scale: float
    private: bool
    lambda_reg: float | None
    seconds: float
    interval: Interval | None = None
    fallback: bool = False


@dataclass(frozen=True)
class Trial:
    """What every method of one comparison draws with; `shared` computes a data-only quantity once."""

    problem: Problem
    u: NDArray[np.float64]
    budget: Budget
    calibration: str
    config: Any  # core.mechanisms.dp_sgd.DPSGDConfig (which builds on this module)
    level: float
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def epsilon(self) -> float:
        return self.budget.epsilon_total

    @property
    def delta(self) -> float:
        return self.budget.delta_total

    @property
    def quantile(self) -> float:
        """z_{1-a/2} of the interval level."""
        return normal_quantile(0.5 + self.level / 2.0)

    def shared(self, key: str, make: Callable[[], Any]) -> Any:
        """make(), computed on first use and kept for the comparison's other draws (data only, never noise)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


Runner = Callable[[Trial], Callable[[np.random.Generator], Draw]]


def of_release(release: Any) -> Draw:
    """A core.mechanisms.release.BaselineRelease as a Draw."""
    return Draw(release.value, release.noise_scale, release.private, release.lambda_reg, release.seconds)

