"""Every method on the same coordinate and the same total (eps, delta), K noise draws each.

Methods for u^T theta (the paper's section 4): "local" (Algorithm 5), "oracle" (NOT private),
"output_perturbation", "objective_perturbation", "dp_sgd", and "local_fallback" (Algorithm 5 with
objective perturbation when lambda_hat_min = 0). For the full vector: Algorithms 3 and 7.

What a method needs that does not depend on the noise is computed once per call, on first use, and
shared by its draws: theta_lam of output perturbation; objective perturbation's b = 0 fit, from
which each draw's fit of (15) starts (core.full_vector.ObjectiveWarmStart); DP-SGD's packed rows and
their norms (core.dp_sgd.sgd_rows). Both regularised fits start one Newton step from theta(P_n)
(core.full_vector.ridge_start), and every fit is certified as a cold one is. The noise-multiplier
calibration is cached by core.dp_sgd. The noise is drawn afresh in every trial, and a draw's
`seconds` leave the shared work out.

Fields computed from the data without privacy are marked with core.marks' NOT_PRIVATE; the
document's list of such entries (`core.report.compare_not_private`) is derived from these marks,
and a method whose values are not private says so in its own `private` flag.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.accounting import Budget
from core.baselines import local_with_fallback, oracle, output_perturbation
from core.dp_sgd import DPSGDConfig, dp_sgd, sgd_rows
from core.errors import InputError
from core.full_vector import (
    OUTPUT_PERTURBATION_LAMBDA,
    algorithm3,
    algorithm7,
    objective_perturbation_vector,
    objective_warm_start,
    regularised_fit_theta,
    ridge_start,
)
from core.marks import NOT_PRIVATE
from core.pipeline import Problem, run_private
from core.release import unit_direction

METHODS = ("local", "oracle", "output_perturbation", "objective_perturbation", "dp_sgd")
EXTRA_METHODS = ("local_fallback",)
FULL_VECTOR_METHODS = ("algorithm3", "algorithm7")


@dataclass(frozen=True)
class MethodTrials:
    """K draws of one method: released values (None for bottom) and what the method promises.

    values are private exactly when `private` is (the oracle's are not). noise_scale is marked not
    private: the local methods' sigma * omega and the oracle's Delta sigma are computed from the fit
    (the other methods' scales are public). seconds, measured running times, can depend on the data.
    """

    method: str
    values: tuple[float | None, ...]
    noise_scale: float = field(metadata=NOT_PRIVATE)
    private: bool
    epsilon: float
    delta: float
    lambda_reg: float | None
    seconds: tuple[float, ...] = field(metadata=NOT_PRIVATE)

    def errors(self, target: float) -> list[float | None]:
        return [None if v is None else v - target for v in self.values]


@dataclass(frozen=True)
class Comparison:
    """All methods' trials for coordinate u, with the targets u^T theta(P_n) and u^T theta*.

    u_theta is the fit's, not private (so is every error measured against it); u_theta_star comes
    from the synthetic generator's theta*, a public setting. full_vector's values are the l2 errors
    ||theta_hat - theta(P_n)||, measured against the fit, so not private.
    """

    u: NDArray[np.float64]
    u_theta: float = field(metadata=NOT_PRIVATE)
    u_theta_star: float | None
    budget: Budget
    methods: dict[str, MethodTrials]
    full_vector: dict[str, MethodTrials] = field(metadata=NOT_PRIVATE)


def check_methods(names: Sequence[str]) -> tuple[str, ...]:
    known = METHODS + EXTRA_METHODS + FULL_VECTOR_METHODS
    if not names:
        raise InputError(f"name at least one method, from {', '.join(known)}")
    unknown = [m for m in names if m not in known]
    if unknown:
        raise InputError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    return tuple(dict.fromkeys(names))


def compare(
    problem: Problem,
    u: NDArray | int,
    budget: Budget,
    trials: int,
    rng: np.random.Generator,
    methods: Sequence[str] = METHODS + FULL_VECTOR_METHODS,
    theta_star: NDArray | None = None,
    calibration: str = "paper",
    dp_sgd_config: DPSGDConfig | None = None,
    progress: Callable[[float], None] | None = None,
) -> Comparison:
    """Run each requested method `trials` times at the budget's total (eps, delta).

    A comparison measures errors against the fit, a non-private quantity: data without a certified
    minimiser raise NoMinimizerError with the fit's diagnosis (a private release would be bottom).
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise InputError(f"the number of trials must be an integer of at least 1, got {trials!r}")
    names = check_methods(methods)
    problem.fit.require_minimiser()
    uv = unit_direction(u, problem.d)
    eps, dlt = budget.epsilon_total, budget.delta_total
    runners = _runners(problem, uv, budget, calibration, dp_sgd_config or DPSGDConfig())
    singles, vectors = {}, {}
    steps, done = len(names) * trials, 0
    for name in names:
        draws = []
        for _ in range(trials):
            draws.append(runners[name](rng))
            done += 1
            if progress:
                progress(done / steps)
        value_list, scales, private, lam, secs = zip(*draws, strict=True)
        finite = [s for s in scales if np.isfinite(s)]
        scale = float(np.median(finite)) if finite else float("nan")  # the full vector's varies with lambda_hat
        trials_ = MethodTrials(name, value_list, scale, private[0], eps, dlt, lam[0], secs)
        (vectors if name in FULL_VECTOR_METHODS else singles)[name] = trials_
    star = None if theta_star is None else float(uv @ np.asarray(theta_star))
    return Comparison(uv, float(uv @ problem.fit.theta), star, budget, singles, vectors)


Draw = tuple[float | None, float, bool, float | None, float]  # value, noise scale, private, lambda_reg, seconds


def _runners(problem: Problem, u: NDArray, budget: Budget, calibration: str,
             config: DPSGDConfig) -> dict[str, Callable[[np.random.Generator], Draw]]:
    eps, dlt = budget.epsilon_total, budget.delta_total
    lazy: dict[str, object] = {}

    def shared(key: str, make: Callable[[], object]) -> Any:  # data only: computed once, on first use
        if key not in lazy:
            lazy[key] = make()
        return lazy[key]

    def baseline(release) -> Draw:
        return release.value, release.noise_scale, release.private, release.lambda_reg, release.seconds

    def local(rng: np.random.Generator) -> Draw:
        start = time.perf_counter()
        run = run_private(problem, u, budget, rng, calibration)
        r = run.release
        return r.value, r.noise_sd, True, problem.fit.lam_reg, time.perf_counter() - start

    def fallback(rng: np.random.Generator) -> Draw:
        start = time.perf_counter()
        run, op = local_with_fallback(problem, u, budget, rng, calibration)
        value = run.release.value if op is None else op.value
        scale = run.release.noise_sd if op is None else op.noise_scale
        return value, scale, True, problem.fit.lam_reg, time.perf_counter() - start

    def output(rng: np.random.Generator) -> Draw:
        theta_lam = shared("output", lambda: regularised_fit_theta(
            problem, OUTPUT_PERTURBATION_LAMBDA, start=ridge_start(problem.fit, OUTPUT_PERTURBATION_LAMBDA)))
        return baseline(output_perturbation(problem, u, eps, dlt, rng, calibration=calibration, theta_lam=theta_lam))

    def sgd(rng: np.random.Generator) -> Draw:
        return baseline(dp_sgd(problem, u, eps, dlt, rng, config, shared("rows", lambda: sgd_rows(problem))))

    def objective(rng: np.random.Generator) -> Draw:  # u^T (15), as core.baselines.objective_perturbation
        start = time.perf_counter()
        warm = shared("objective", lambda: objective_warm_start(problem, eps, dlt))
        vec = objective_perturbation_vector(problem, eps, dlt, rng, warm)
        return float(u @ vec.value), vec.noise_scale, True, vec.lambda_reg, time.perf_counter() - start

    def full(algorithm) -> Callable[[np.random.Generator], Draw]:
        def draw(rng: np.random.Generator) -> Draw:
            start = time.perf_counter()
            out = algorithm(problem.fit, problem.geometry, eps, dlt, rng, calibration)
            err = None if out.value is None else float(np.linalg.norm(out.value - problem.fit.theta))
            return err, out.noise_scale or float("nan"), True, problem.fit.lam_reg, time.perf_counter() - start

        return draw

    return {
        "local": local,
        "local_fallback": fallback,
        "oracle": lambda rng: baseline(oracle(problem, u, eps, dlt, rng, calibration)),
        "output_perturbation": output,
        "objective_perturbation": objective,
        "dp_sgd": sgd,
        "algorithm3": full(algorithm3),
        "algorithm7": full(algorithm7),
    }
