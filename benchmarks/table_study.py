"""The regression table against k separate releases and Algorithm 3's full vector, measured at the total
(eps, delta) = (4, 1e-6), intervals at 95 %.

- table: core.mechanisms.table.release_table of the k coefficients at the publish default's budget (split
  RELEASE_SPLIT, the fallback on), `--table-draws` times; its intervals hold at once, each row at 1 - 0.05/k;
- Algorithm 3: the whole vector with half the total on its certificate (core.mechanisms.full_vector.algorithm3), each
  coordinate's interval at the same row level as the table's;
- separate: for each coefficient, `--draws` releases of the publish default, each at a k-th of the total: by
  privacy-loss distributions (core.privacy.accounting.separate_budget) without the fallback on synthetic data, by basic
  composition (eps/k, delta/k) with the fallback on census data (the fallback's proof is basic composition's).
Per coefficient: the median half-width, the share of draws released, and how many of the released intervals cover
theta_j(P_n), with a 95 % Clopper-Pearson interval. Prints Markdown tables (docs/experiments.md, "A regression
table").

    python benchmarks/table_study.py [--n 1000000] [--d 10] [--k 3 10] [--draws 200] [--table-draws 400]
    python benchmarks/table_study.py --acs-root DIR --state CA [--coefficients female,schooling,working_age,hours]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data import synthetic  # noqa: E402
from core.data.spec import AcsSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.full_vector import algorithm3  # noqa: E402
from core.mechanisms.pipeline import prepare, prepare_spec, run_private  # noqa: E402
from core.mechanisms.stability import solver_slack  # noqa: E402
from core.mechanisms.table import coordinates, release_table, row_level  # noqa: E402
from core.methods.compare import rate  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget, separate_budget  # noqa: E402
from core.privacy.gaussian import normal_quantile  # noqa: E402

EPSILON, DELTA, LEVEL = 4.0, 1e-6, 0.95


def summary(halves: list[float | None], covered: list[bool]) -> str:
    got = [h for h in halves if h is not None]
    if not got:
        return "⊥ every draw | – | –"
    r = rate(sum(covered), len(got))
    return (f"{statistics.median(got):.3g} | {len(got)}/{len(halves)} | {sum(covered)}/{len(got)} "
            f"({r.low:.3f}–{r.high:.3f})")


def algorithm3_half(problem, k: int, rng, draws: int = 20) -> float | None:
    """The median half-width of Algorithm 3's coordinates at the table's row level."""
    f, g, z = problem.fit, problem.geometry, normal_quantile(0.5 + row_level(LEVEL, k) / 2)
    got = [z * v.noise_scale + solver_slack(v.certificate.lambda_hat + f.lam_reg, g)
           for v in (algorithm3(f, g, EPSILON, DELTA, rng) for _ in range(draws)) if v.noise_scale is not None]
    return statistics.median(got) if got else None


def study(problem, idx: tuple[int, ...], draws: int, table_draws: int, seed: int, census: bool) -> list[str]:
    theta, k = problem.fit.theta, len(idx)
    rng = np.random.default_rng(seed)
    budget = make_budget(EPSILON, DELTA, RELEASE_SPLIT)
    tables = [release_table(problem, idx, budget, rng, level=LEVEL, fallback=True) for _ in range(table_draws)]
    each = make_budget(EPSILON / k, DELTA / k, RELEASE_SPLIT) if census else separate_budget(EPSILON, DELTA, k,
                                                                                            RELEASE_SPLIT)
    a3 = algorithm3_half(problem, k, rng)
    branches = {s: sum(t.status == s for t in tables) for s in ("released", "fallback", "bottom")}
    rows = [f"k = {k}: the table's branches {branches}; Algorithm 3's half-width at the row level "
            f"{'⊥' if a3 is None else f'{a3:.3g}'}"]
    for i, j in enumerate(idx):
        t_half = [None if t.half_widths is None else t.half_widths[i] for t in tables]
        t_cov = [lo <= theta[j] <= hi for t in tables if t.intervals for lo, hi in [t.intervals[i]]]
        runs = [run_private(problem, j, each, rng, level=LEVEL, fallback=census).release for _ in range(draws)]
        s_half = [None if r.interval is None else (r.interval[1] - r.interval[0]) / 2 for r in runs]
        s_cov = [r.interval[0] <= theta[j] <= r.interval[1] for r in runs if r.interval is not None]
        rows.append(f"| {k} | {problem.feature_names[j]} | {summary(t_half, t_cov)} | {summary(s_half, s_cov)} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--k", type=int, nargs="+", default=[3, 10])
    ap.add_argument("--acs-root", help="census data instead: folktables' root folder")
    ap.add_argument("--state", default="CA")
    ap.add_argument("--coefficients", nargs="+", default=["female,schooling,working_age,hours", "all"],
                    help="census: the tables, each comma-separated names or all")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--table-draws", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args(argv)
    if args.acs_root:
        spec = AcsSpec(states=(args.state,), root=args.acs_root)
        problem = prepare_spec(spec.load(), ModelSpec("logistic", "ball", None, 0.0), spec)
        tables = [coordinates(problem, names) for names in args.coefficients]
    else:
        ds = synthetic(args.n, args.d, "logistic", seed=1)
        problem = prepare(ds.X, ds.y, "logistic", "ball")
        tables = [tuple(range(k)) for k in args.k]
    print(f"n = {problem.n:,}, d = {problem.d}, (eps, delta) = ({EPSILON:g}, {DELTA:g}), {args.table_draws} tables "
          f"and {args.draws} separate releases per coefficient, the table's intervals at {LEVEL:.0%} at once")
    for n_table, idx in enumerate(tables):
        rows = study(problem, idx, args.draws, args.table_draws, args.seed + n_table, args.acs_root is not None)
        print(f"\n{rows[0]}\n")
        print("| k | coefficient | table: median half-width | released | covers θⱼ(Pₙ) (95 % CP) "
              "| separate: median half-width | released | covers θⱼ(Pₙ) (95 % CP) |")
        print("|---|---|---|---|---|---|---|---|")
        print("\n".join(rows[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
