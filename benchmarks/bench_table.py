"""Server time of a regression table of all 17 coefficients at n = 10^6, after the fit: the release (the publish
default, core.mechanisms.table), its document and the forest plot with its description, against one release of one
coefficient by the publish default on the same fit (the peer), medians of --repeats in one process.

On synthetic logistic data the test (14) passes and the table is the Gaussian step; with --acs-root, on a census
sample of n drawn with replacement, it fails and the table is the fallback (objective perturbation and 17 curvature
bounds), the costly branch.

    python benchmarks/bench_table.py [--n 1000000] [--d 17] [--repeats 7] [--acs-root DIR --state CA]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data import synthetic  # noqa: E402
from core.data.spec import AcsSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.pipeline import prepare, prepare_spec, run_private  # noqa: E402
from core.mechanisms.table import release_table  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget  # noqa: E402
from core.report import table_document  # noqa: E402
from ui.svg import forest_figure  # noqa: E402

TARGET_S = 1.0


BUDGET = make_budget(4.0, 1e-6, RELEASE_SPLIT)


def table_view(problem, rng) -> str:
    t = release_table(problem, "all", BUDGET, rng, fallback=True)
    doc = table_document(t, "benchmark", problem.n, problem.d, problem.model, None)
    forest_figure(doc["table"]["rows"], t.level, dict(zip(t.names, t.fitted, strict=True))).svg()
    return t.status


def timed(f, *args) -> float:
    start = time.perf_counter()
    f(*args)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=17)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--acs-root", help="a census sample instead: folktables' root folder")
    ap.add_argument("--state", default="CA")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    if args.acs_root:
        spec = AcsSpec(states=(args.state,), root=args.acs_root, n=args.n, sample_seed=1, with_replacement=True)
        problem = prepare_spec(spec.load(), ModelSpec("logistic", "ball", None, 0.0), spec)
    else:
        ds = synthetic(args.n, args.d, "logistic", seed=1)
        problem = prepare(ds.X, ds.y, "logistic", "ball")
    fit_s = time.perf_counter() - start
    rng = np.random.default_rng()
    cold = timed(table_view, problem, rng)
    branch = table_view(problem, rng)
    table = statistics.median(timed(table_view, problem, rng) for _ in range(args.repeats))
    peer = statistics.median(timed(run_private, problem, 0, BUDGET, rng, "paper", 0.95, True)
                             for _ in range(args.repeats))
    met = "met" if max(cold, table) <= TARGET_S else "NOT met"
    print(f"n = {problem.n:,}, d = {problem.d}, the table's branch {branch}: fit {fit_s:.2f} s (once); table of "
          f"{problem.d} coefficients cold {cold:.3f} s, median {table:.4f} s; one coefficient's release median "
          f"{peer:.4f} s; ratio {table / peer:.2f}; target {TARGET_S:g} s {met}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
