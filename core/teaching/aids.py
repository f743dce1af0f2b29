"""Teaching aids, NOT private: the recursions' trajectories behind the Pipeline's staircases, and the what-if grid.

Beside core.teaching.whatif: the trajectories start from the fit's true eigenvalues (and from the certified bounds) and
step through the recursions (10) and (12) of core.mechanisms.recursion; every value is computed from the data without
privacy, or only serves to show such values next to private ones. Nothing here may be shown in publish mode.

A trajectory is thinned for plotting to `Steps`: the steps k kept (about MAX_POINTS spread from the first to the
last, plus every one of the last ZOOM, where the counts N, N̂ and m fall) and R^k at those steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from core.estimator.problem import Problem
from core.mechanisms.recursion import down_recursion, up_recursion

MAX_POINTS = 1000  # plotted points per recursion path: enough for the eye, light for the browser
ZOOM = 300  # steps kept at full resolution at the end of a recursion path, where N, N̂ and m fall
# The what-if's grids: total ε, and n up to core.teaching.whatif.N_MAX, where census-like data first pass (about 10^9).
# Above core.teaching.whatif.EXACT_STEPS recursion steps a cell uses the continuous count, so a row costs the same at
# any n.
WHATIF_EPS: NDArray[np.float64] = np.geomspace(0.1, 100.0, 10)
WHATIF_N_MAX = 10**12
WHATIF_N_PER_DECADE = 2

Steps = tuple[NDArray[np.int64], NDArray[np.float64]]  # (k, R^k) of a recursion at the steps kept for plotting


def thin_steps(last: int) -> NDArray[np.int64]:
    """About MAX_POINTS steps k from 0 to last, and every one of the last ZOOM for the close-up; sorted, unique."""
    spread = np.linspace(0, last, min(last + 1, MAX_POINTS)).round().astype(np.int64)
    return np.union1d(spread, np.arange(max(0, last - ZOOM), last + 1, dtype=np.int64))


def thin(path: Sequence[float]) -> Steps:
    """(k, R^k) of a whole trajectory R^0, R^1, ..., at the thinned steps."""
    k = thin_steps(len(path) - 1)
    return k, np.asarray(path, dtype=np.float64)[k]


def falling_path(problem: Problem, start: float) -> Steps:
    """The decreasing recursion (10) of Algorithm 2 from `start` down to 0 (N + 1 values), thinned.

    From the fit's λmin(Pₙ) it is NOT private; from the certified λ̂min it is post-processing.
    """
    f = problem.fit
    return thin(down_recursion(problem.geometry, f.n, f.lam_reg).trajectory(start))


def rising_path(problem: Problem, lambda_hat_min: float, start: float) -> Steps:
    """The increasing recursion (12) of Algorithm 4, set up by λ̂min, from `start` up to its cap G₁, thinned.

    Its closed form R^k gives each kept step directly, without the steps in between. From the fit's λmax(Pₙ)
    it is NOT private; from the certified λ̂max it is post-processing.
    """
    f = problem.fit
    up = up_recursion(lambda_hat_min, problem.geometry, f.n, f.lam_reg)
    k = thin_steps(up.count(start))
    return k, np.array([up.power(start, int(i)) for i in k], dtype=np.float64)


def whatif_n_grid(problem: Problem) -> NDArray[np.int64]:
    """The what-if's sample sizes: WHATIF_N_PER_DECADE a decade on a log scale from 50 d to WHATIF_N_MAX."""
    low = 50 * problem.d
    count = 1 + math.ceil(WHATIF_N_PER_DECADE * math.log10(WHATIF_N_MAX / low))
    return np.unique(np.geomspace(low, WHATIF_N_MAX, count).round().astype(np.int64))
