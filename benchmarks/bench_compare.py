"""Timing benchmark of `core.methods.compare.compare`: the five default methods on u = e_0, K draws each.

Synthetic robust data (d = 5, the app's defaults), (eps, delta) = (4, 1e-6) split as the app splits it.
For each method, wall-clock (`time.perf_counter`) of

- now: `compare(problem, 0, budget, K, rng, [method])`, its shared data-only work included
  (output perturbation's theta_lam, objective perturbation's warm start, DP-SGD's packed rows);
- previous: the per-draw loop as `compare` ran it before: Algorithm 5, the oracle and output
  perturbation (theta_lam once) as now; objective perturbation cold from 0 every draw
  (`core.mechanisms.baselines.objective_perturbation`); DP-SGD with one `poisson_batch` per step, fancy-index
  gathers, per-step noise and the row norms recomputed every draw (`previous_dp_sgd_theta` below);
- fallback (DP-SGD only): `compare(..., ["dp_sgd"])` with DP-SGD's compiled steps and batch
  selection off (`core.mechanisms.dp_sgd.STEPS_KERNEL` and `DISTINCT_KERNEL` set to None in-process: the
  NumPy path that PSP_NO_JIT=1 or a missing numba selects), on the same seed as now; the script
  stops if its K values differ from the compiled ones by more than 1e-12 relative.

The three alternate within each repeat, so all see the same load; the figures are medians over the
repeats. DP-SGD's noise-multiplier calibration (lru_cached, public parameters only) is done once
before the timings and reported apart; one comparison with K = 1, outside the medians, warms up the
rest, and its time (which includes loading the compiled code from core/__pycache__) is reported too.

    python benchmarks/bench_compare.py                 # n = 10^6, K = 20, 3 repeats
    python benchmarks/bench_compare.py --n 20000 --draws 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import core.mechanisms.dp_sgd
from core.data import synthetic
from core.mechanisms.baselines import objective_perturbation, oracle, output_perturbation
from core.mechanisms.dp_sgd import DPSGDConfig, calibrate_noise_multiplier, clipped_weights, poisson_batch
from core.mechanisms.full_vector import OUTPUT_PERTURBATION_LAMBDA, regularised_fit_theta
from core.mechanisms.pipeline import Problem, make_rng, prepare, run_private
from core.mechanisms.release import unit_direction
from core.methods.compare import METHODS, compare
from core.privacy.accounting import split_budget

TARGET_S = 3.0
AGREE = 1e-12  # compiled DP-SGD against its NumPy fallback, relative


def previous_dp_sgd_theta(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                          config: DPSGDConfig) -> NDArray[np.float64]:
    """DP-SGD as core.mechanisms.dp_sgd ran it before: one batch, one gather and one noise draw per step."""
    X, y, loss = problem.X, problem.y, problem.geometry.loss
    n, d = X.shape
    lam, q = problem.fit.lam_reg, config.sampling_rate(n)
    z = calibrate_noise_multiplier(epsilon, delta, q, config.steps, config.accountant, config.neighbours)
    lr = 1.0 / (problem.geometry.G1 + lam)
    C, denom = config.clip_norm, q * n
    row_norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    keep_from = config.steps - config.averaged_steps()
    theta, total = np.zeros(d), np.zeros(d)
    for step in range(config.steps):
        idx = poisson_batch(rng, n, q)
        Xb = X[idx]
        w = clipped_weights(Xb @ theta, y[idx], row_norms[idx], loss, C)
        theta = theta - lr * ((Xb.T @ w + z * C * rng.standard_normal(d)) / denom + lam * theta)
        if step >= keep_from:
            total += theta
    return total / config.averaged_steps()


def previous(problem: Problem, method: str, budget, draws: int, rng: np.random.Generator) -> None:
    """K draws of `method` the way compare made them before (module docstring)."""
    eps, dlt = budget.epsilon_total, budget.delta_total
    u = unit_direction(0, problem.d)
    if method == "output_perturbation":
        theta_lam = regularised_fit_theta(problem, OUTPUT_PERTURBATION_LAMBDA)
    draw: dict[str, Callable[[], object]] = {
        "local": lambda: run_private(problem, u, budget, rng),
        "oracle": lambda: oracle(problem, u, eps, dlt, rng),
        "output_perturbation": lambda: output_perturbation(problem, u, eps, dlt, rng, theta_lam=theta_lam),
        "objective_perturbation": lambda: objective_perturbation(problem, u, eps, dlt, rng),
        "dp_sgd": lambda: float(u @ previous_dp_sgd_theta(problem, eps, dlt, rng, DPSGDConfig())),
    }
    for _ in range(draws):
        draw[method]()


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def fallback_dp_sgd(problem: Problem, budget, draws: int, rng: np.random.Generator) -> tuple[float, ...]:
    """compare's DP-SGD draws with the compiled steps and batch selection off (the NumPy path)."""
    kernels = core.mechanisms.dp_sgd.STEPS_KERNEL, core.mechanisms.dp_sgd.DISTINCT_KERNEL
    core.mechanisms.dp_sgd.STEPS_KERNEL = core.mechanisms.dp_sgd.DISTINCT_KERNEL = None
    try:
        return compare(problem, 0, budget, draws, rng, ["dp_sgd"]).methods["dp_sgd"].values
    finally:
        core.mechanisms.dp_sgd.STEPS_KERNEL, core.mechanisms.dp_sgd.DISTINCT_KERNEL = kernels


def machine() -> str:
    """nproc, the CPU model and the load averages, for the record."""
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"nproc {len(os.sched_getaffinity(0))}, {model}, load average {load}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=20, help="K, draws per method")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    data = synthetic(args.n, 5, "robust", 1.0, 1.0, 0)
    problem = prepare(data.X, data.y, "robust", "cube", None, 0.0, data.feature_names)
    budget = split_budget(4.0, 1e-6)
    cfg = DPSGDConfig()
    calibration_s = timed(lambda: calibrate_noise_multiplier(
        budget.epsilon_total, budget.delta_total, cfg.sampling_rate(problem.n), cfg.steps, cfg.accountant,
        cfg.neighbours))
    if core.mechanisms.dp_sgd.STEPS_KERNEL is None:
        raise SystemExit("DP-SGD's compiled steps are off (PSP_NO_JIT is set, or numba is missing)")
    print(f"start: {machine()}")
    warmup_s = timed(lambda: compare(problem, 0, budget, 1, make_rng(0)))  # imports and compiled kernels
    now: dict[str, list[float]] = {m: [] for m in METHODS}
    before: dict[str, list[float]] = {m: [] for m in METHODS}
    fallback: list[float] = []
    for rep in range(args.repeats):
        for m in METHODS:
            rng = make_rng(rep)
            start = time.perf_counter()
            got = compare(problem, 0, budget, args.draws, rng, [m]).methods[m].values
            now[m].append(time.perf_counter() - start)
            rng = make_rng(rep)
            before[m].append(timed(lambda m=m, rng=rng: previous(problem, m, budget, args.draws, rng)))
            if m == "dp_sgd":
                start = time.perf_counter()
                ref = fallback_dp_sgd(problem, budget, args.draws, make_rng(rep))
                fallback.append(time.perf_counter() - start)
                worst = max(abs(a - b) / abs(b) for a, b in zip(got, ref, strict=True))
                if worst > AGREE:
                    raise SystemExit(f"compiled and NumPy DP-SGD differ by {worst:.1e} relative (repeat {rep})")
    print(f"end: {machine()}")

    print(f"n = {args.n:,}, d = 5, synthetic robust, (eps, delta) = (4, 1e-6), K = {args.draws}, "
          f"medians of {args.repeats} repeats")
    print(f"DP-SGD's noise-multiplier calibration, once (cached): {calibration_s:.2f} s")
    print(f"warm-up comparison, K = 1 (loads the compiled code): {warmup_s:.2f} s")
    print("| method | previous | now | ratio |")
    print("|---|---|---|---|")
    for m in METHODS:
        b, a = statistics.median(before[m]), statistics.median(now[m])
        print(f"| {m} | {b:.3f} s | {a:.3f} s | {b / a:.1f}x |")
    totals_before = [sum(before[m][r] for m in METHODS) for r in range(args.repeats)]
    totals_now = [sum(now[m][r] for m in METHODS) for r in range(args.repeats)]
    b, a = statistics.median(totals_before), statistics.median(totals_now)
    verdict = "met" if a <= TARGET_S else "**not met**"
    print(f"| **total** | {b:.2f} s | **{a:.2f} s** ({min(totals_now):.2f} to {max(totals_now):.2f}) | "
          f"{b / a:.1f}x |")
    print(f"target: total <= {TARGET_S:.0f} s: {verdict}")
    f, a = statistics.median(fallback), statistics.median(now["dp_sgd"])
    print(f"DP-SGD, K = {args.draws}: NumPy fallback {f:.3f} s, compiled {a:.3f} s, ratio {f / a:.1f}x "
          f"(values equal to {AGREE:.0e} relative)")


if __name__ == "__main__":
    main()
