"""The publish default on census data: its interval's half-width and coverage, against objective perturbation.

    python -m benchmarks.publish_default --acs-root DIR [--draws 200] [--state CA --coordinate female --epsilon 4]

On the state's filtered records (all of them, as the app loads them: the ball of the encoding's radius), draws the
app's default release (`core.pipeline.run_private` at `RELEASE_SPLIT` with the fallback) `--draws` times with fresh
noise, and objective perturbation at the whole (eps, delta) as many times. Prints, as one JSON object: which branch
each draw took, the median and largest half-width, how many intervals cover u^T theta(P_n) (with a 95 %
Clopper-Pearson interval), how many rest on the certified curvature, and both methods' median absolute error against
u^T theta(P_n). Seeds fix the noise, so a run repeats. Not a privacy claim: it measures accuracy.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import stats

from core.accounting import RELEASE_SPLIT, make_budget
from core.baselines import objective_perturbation
from core.model import ModelSpec
from core.pipeline import prepare_spec, run_private
from core.spec import AcsSpec


def measure(root: str, state: str, coordinate: str, epsilon: float, delta: float, draws: int, seed: int) -> dict:
    spec = AcsSpec(states=(state,), root=root)
    problem = prepare_spec(spec.load(), ModelSpec("logistic", "ball", None, 0.0), spec)
    j = problem.coordinate(coordinate)
    target = float(problem.fit.theta[j])
    budget = make_budget(epsilon, delta, RELEASE_SPLIT)
    rng = np.random.default_rng(seed)
    runs = [run_private(problem, j, budget, rng, fallback=True).release for _ in range(draws)]
    released = [r for r in runs if r.interval is not None]
    half = np.array([(r.interval[1] - r.interval[0]) / 2 for r in released])
    covers = sum(r.interval[0] <= target <= r.interval[1] for r in released)
    lo, hi = stats.binomtest(covers, len(released)).proportion_ci(0.95, "exact") if released else (np.nan, np.nan)
    op = [objective_perturbation(problem, j, epsilon, delta, rng).value for _ in range(draws)]
    return dict(
        state=state, root=root, n=problem.n, coordinate=coordinate, epsilon=epsilon, delta=delta, draws=draws,
        target=target,
        branches={s: sum(r.status == s for r in runs) for s in ("released", "fallback", "bottom")},
        curvature_certified=sum(r.fallback_curvature is not None and r.fallback_curvature.bound is not None
                                for r in runs),
        median_half_width=float(np.median(half)) if released else None,
        max_half_width=float(half.max()) if released else None,
        coverage=covers / len(released) if released else None, coverage_ci=[float(lo), float(hi)],
        median_error_default=float(np.median([abs(r.value - target) for r in released])) if released else None,
        median_error_objective_full=float(np.median(np.abs(np.array(op) - target))),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acs-root", required=True)
    ap.add_argument("--state", default="CA")
    ap.add_argument("--coordinate", default="female")
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(measure(a.acs_root, a.state, a.coordinate, a.epsilon, a.delta, a.draws, a.seed), indent=1))


if __name__ == "__main__":
    main()
