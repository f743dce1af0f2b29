"""The publish default on census data: its interval's half-width and coverage, against objective perturbation.

    python -m benchmarks.publish_default --acs-root DIR [--draws 200] [--state CA --coordinate female --epsilon 4]
    python -m benchmarks.publish_default --acs-root DIR --grid [--draws 40] [--state MI --coordinate schooling]
    python -m benchmarks.publish_default --acs-root DIR --population [--draws 200] [--sample-n 100000]

On the state's filtered records (all of them, as the app loads them: the ball of the encoding's radius), draws the
app's default release (`core.mechanisms.pipeline.run_private` at `RELEASE_SPLIT` with the fallback) `--draws` times
with fresh noise, and objective perturbation at the whole (eps, delta) as many times. Prints, as one JSON object: which
branch each draw took, the median and largest half-width, how many intervals cover u^T theta(P_n) (with a 95 %
Clopper-Pearson interval), how many rest on the certified curvature, and both methods' median absolute error against
u^T theta(P_n). Seeds fix the noise, so a run repeats. Not a privacy claim: it measures accuracy.

--grid does the same comparison at every (n, eps) of Figs. 6-7, on one sample of n drawn with replacement (as the
figures draw), with common random numbers: each draw of objective perturbation at the whole budget uses the same
generator state as the default's fallback (advanced past the default's Laplace counts), so both perturb the objective
along the same normal vector and their errors are compared draw by draw. Prints the median error of each and the
median of the per-draw ratios, with the default's branch counts.

--population draws `--draws` samples of `--sample-n` records without replacement from the state's records and
releases on each; prints how often the population interval covers the coefficient of the fit on all records.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import stats

from core.data.acs import FEATURE_NAMES, load_state, sample_population
from core.data.spec import AcsSpec
from core.estimator.model import ModelSpec
from core.mechanisms.baselines import objective_perturbation
from core.mechanisms.pipeline import prepare, prepare_spec, run_private
from core.privacy.accounting import RELEASE_SPLIT, make_budget
from core.teaching.experiments import CENSUS_GRID


def measure(root: str, state: str, coordinate: str, epsilon: float, delta: float, draws: int, seed: int,
            sample_n: int | None = None) -> dict:
    """The interval study on all of the state's records, or on a sample of sample_n drawn with replacement."""
    spec = AcsSpec(states=(state,), root=root, n=sample_n, sample_seed=None if sample_n is None else seed,
                   with_replacement=sample_n is not None)
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


SAMPLE_N = 20_000


def grid(root: str, state: str, coordinate: str, delta: float, draws: int, seed: int) -> list[dict]:
    """The paired comparison of the module docstring at every (n, eps) of Figs. 6-7."""
    X, y = load_state(root, state)
    out = []
    for n in CENSUS_GRID:
        Xs, ys, _ = sample_population(X, y, n, seed, with_replacement=True)
        problem = prepare(Xs, ys, "logistic")
        j = list(FEATURE_NAMES).index(coordinate)
        target = float(problem.fit.theta[j])
        for epsilon in (2.0, 4.0, 8.0):
            budget = make_budget(epsilon, delta, RELEASE_SPLIT)
            default, full, branches = [], [], []
            for k in range(draws):
                run = run_private(problem, j, budget, np.random.default_rng([seed, k]), fallback=True)
                rng = np.random.default_rng([seed, k])
                for _ in range(1 if run.lambda_max is None else 2):  # the default's Laplace counts
                    rng.laplace()
                full.append(abs(objective_perturbation(problem, j, epsilon, delta, rng).value - target))
                default.append(abs(run.release.value - target) if run.release.value is not None else np.nan)
                branches.append(run.release.status + ("" if run.lambda_max is None else " after stage 2"))
            d, f = np.array(default), np.array(full)
            out.append(dict(state=state, n=n, epsilon=epsilon, draws=draws, median_error_default=float(np.nanmedian(d)),
                            median_error_objective_full=float(np.median(f)),
                            median_ratio=float(np.nanmedian(d / f)),
                            branches={b: branches.count(b) for b in sorted(set(branches))}))
            print(json.dumps(out[-1]), flush=True)
    return out


def population(root: str, state: str, coordinate: str, epsilon: float, delta: float, draws: int, sample_n: int,
               seed: int) -> dict:
    """Coverage of the population interval over samples without replacement (module docstring)."""
    X, y = load_state(root, state)
    j = list(FEATURE_NAMES).index(coordinate)
    target = float(prepare(X, y, "logistic", "ball", 3.0).fit.theta[j])
    budget = make_budget(epsilon, delta, RELEASE_SPLIT)
    offered = covered = 0
    halves = []
    for k in range(draws):
        Xs, ys, _ = sample_population(X, y, sample_n, seed + k)
        rel = run_private(prepare(Xs, ys, "logistic", "ball", 3.0), j, budget, np.random.default_rng([seed, k]),
                          fallback=True).release
        if rel.population is not None:
            lo, hi = rel.population.interval
            offered, covered = offered + 1, covered + (lo <= target <= hi)
            halves.append((hi - lo) / 2)
    ci = stats.binomtest(covered, offered).proportion_ci(0.95, "exact") if offered else (np.nan, np.nan)
    return dict(state=state, coordinate=coordinate, epsilon=epsilon, sample_n=sample_n, samples=draws,
                population_target=target, offered=offered, covered=covered,
                coverage=covered / offered if offered else None, coverage_ci=[float(ci[0]), float(ci[1])],
                median_half_width=float(np.median(halves)) if halves else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acs-root", required=True)
    ap.add_argument("--state", default="CA")
    ap.add_argument("--coordinate", default="female")
    ap.add_argument("--epsilon", type=float, default=4.0)
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", action="store_true", help="the paired comparison at every (n, eps) of Figs. 6-7")
    ap.add_argument("--population", action="store_true", help="the population interval's coverage")
    ap.add_argument("--sample-n", type=int, default=SAMPLE_N,
                    help="--population: the samples' size; otherwise, given, a sample drawn with replacement")
    a = ap.parse_args()
    if a.grid:
        grid(a.acs_root, a.state, a.coordinate, a.delta, a.draws, a.seed)
    elif a.population:
        print(json.dumps(population(a.acs_root, a.state, a.coordinate, a.epsilon, a.delta, a.draws, a.sample_n,
                                    a.seed), indent=1))
    else:
        print(json.dumps(measure(a.acs_root, a.state, a.coordinate, a.epsilon, a.delta, a.draws, a.seed,
                                 a.sample_n if a.sample_n != SAMPLE_N else None), indent=1))


if __name__ == "__main__":
    main()
