"""The regression table against k separate releases, measured: synthetic logistic data (n = 10^6, d = 10, the ball),
total (eps, delta) = (4, 1e-6), intervals at 95 %.

- table: core.table.release_table of k coefficients (Algorithm 3 published in part), `--table-draws` times (its
  intervals cover at the level exactly, to first order, so a coverage check needs more draws than 200);
- separate: for each coefficient, `--draws` Algorithm 5 releases (the app's split), each at the budget
  core.accounting.separate_budget gives one of k releases composed by PLD to the same total;
- Algorithm 3's full vector has the table's per-coordinate noise by construction (the table publishes part of it).
Per coefficient: the median half-width, the share of draws released, and how many of the released intervals cover
theta_j(P_n), with a 95 % Clopper-Pearson interval. Prints a Markdown table (docs/experiments.md, "A regression table").

    python benchmarks/table_study.py [--n 1000000] [--d 10] [--k 3 10] [--draws 200] [--table-draws 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.accounting import RELEASE_SPLIT, separate_budget  # noqa: E402
from core.compare import rate  # noqa: E402
from core.data import synthetic  # noqa: E402
from core.pipeline import prepare, run_private  # noqa: E402
from core.table import release_table  # noqa: E402

EPSILON, DELTA, LEVEL = 4.0, 1e-6, 0.95


def summary(halves: list[float | None], covered: list[bool]) -> str:
    got = [h for h in halves if h is not None]
    if not got:
        return "⊥ every draw | – | –"
    r = rate(sum(covered), len(got))
    return (f"{statistics.median(got):.3g} | {len(got)}/{len(halves)} | {sum(covered)}/{len(got)} "
            f"({r.low:.3f}–{r.high:.3f})")


def study(problem, k: int, draws: int, table_draws: int, seed: int) -> list[str]:
    theta = problem.fit.theta
    rng = np.random.default_rng(seed)
    tables = [release_table(problem, tuple(range(k)), EPSILON, DELTA, rng, level=LEVEL) for _ in range(table_draws)]
    each = separate_budget(EPSILON, DELTA, k, RELEASE_SPLIT)
    rows = []
    for j in range(k):
        t_half = [t.half_width for t in tables]
        t_cov = [lo <= theta[j] <= hi for t in tables if t.intervals for lo, hi in [t.intervals[j]]]
        runs = [run_private(problem, j, each, rng, level=LEVEL).release for _ in range(draws)]
        s_half = [None if r.interval is None else (r.interval[1] - r.interval[0]) / 2 for r in runs]
        s_cov = [r.interval[0] <= theta[j] <= r.interval[1] for r in runs if r.interval is not None]
        rows.append(f"| {k} | x{j} | {summary(t_half, t_cov)} | {summary(s_half, s_cov)} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--k", type=int, nargs="+", default=[3, 10])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--table-draws", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261125)
    args = ap.parse_args(argv)
    ds = synthetic(args.n, args.d, "logistic", seed=1)
    problem = prepare(ds.X, ds.y, "logistic", "ball")
    print(f"n = {problem.n:,}, d = {problem.d}, (eps, delta) = ({EPSILON:g}, {DELTA:g}), {args.table_draws} tables "
          f"and {args.draws} separate releases per coefficient, intervals at {LEVEL:.0%}")
    print("| k | coefficient | table: median half-width | released | covers θⱼ(Pₙ) (95 % CP) "
          "| separate: median half-width | released | covers θⱼ(Pₙ) (95 % CP) |")
    print("|---|---|---|---|---|---|---|---|")
    for k in args.k:
        for row in study(problem, k, args.draws, args.table_draws, args.seed + k):
            print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
