"""Algorithm 5 with the paper's fallback (section 4.2), as a comparison method: objective perturbation with the
budget the later stages would have used when lambda_hat_min = 0 (core.mechanisms.baselines.fallback_budget)."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from core.estimator.problem import Problem
from core.mechanisms.baselines import fallback_budget, objective_perturbation
from core.mechanisms.fallback import fallback_half_width
from core.mechanisms.pipeline import PrivateRun, run_private
from core.mechanisms.release import BaselineRelease
from core.mechanisms.trial import Draw, Trial
from core.privacy.accounting import Budget


def local_with_fallback(problem: Problem, u: NDArray | int, budget: Budget, rng: np.random.Generator,
                        calibration: str = "paper", level: float = 0.95) -> tuple[PrivateRun, BaselineRelease | None]:
    """Algorithm 5; when lambda_hat_min = 0, objective perturbation with the remaining budget instead."""
    run = run_private(problem, u, budget, rng, calibration, level)
    if run.lambda_min.lambda_hat > 0:
        return run, None
    eps, dlt = fallback_budget(budget)
    return run, objective_perturbation(problem, u, eps, dlt, rng, calibration)


def local_fallback_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """core.methods.registry's runner: Algorithm 5's release, or the fallback's with its interval (which, lambda_hat_min
    being 0, rests on the fallback's lam alone: core.mechanisms.fallback)."""
    def draw(rng: np.random.Generator) -> Draw:
        start = time.perf_counter()
        run, op = local_with_fallback(t.problem, t.u, t.budget, rng, t.calibration, t.level)
        if op is None:
            r = run.release
            return Draw(r.value, r.noise_sd, True, t.problem.fit.lam_reg, time.perf_counter() - start, r.interval)
        half = fallback_half_width(op.lambda_reg, op.noise_scale, t.level, t.problem.geometry)
        return Draw(op.value, op.noise_scale, True, t.problem.fit.lam_reg, time.perf_counter() - start,
                    (op.value - half, op.value + half), True)

    return draw
