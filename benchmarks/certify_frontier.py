"""The width frontier: the smallest epsilon at which a released coefficient certifies its curvature and is within twice
the non-private 95 % interval, measured by real releases on SYNTHETIC census files.

A sibling of benchmarks/certify_measure.py, with the same releases drawn through core, nothing re-implemented (its
draw_problem and single): for one coefficient, as the preview and the Release button draw it,

    c = certify(problem, j, budget, make_rng(None), True)
    release = finish(problem, c, make_rng(None), calibration, 0.95, True).release

(calibration --calibration, the app's default unless told) with budget = make_budget(eps, 1e-6, RELEASE_SPLIT) (the
publish default split (1, 1, 18), basic composition), the fallback on with core's split rule (core.mechanisms.split),
level 0.95, and the privacy noise from the operating system (make_rng(None)), so a run does not
replay draw for draw. Data through core.data.spec.AcsSpec in the app's default encoding (centred), the model as the
app builds it (logistic loss on the encoding's ball, ||x||_2 <= 2.3503). Each process uses one BLAS thread (unless
the environment says otherwise).

Cells: (state, n) for TX with n = 20,000, 50,000 and all filtered rows, and MI with n = 20,000 and all filtered rows
(MI's file has about 46,000). A sampled cell draws a fresh sample of n rows without replacement per draw
(sample_seed = --seed + draw index; a draw's sample serves every epsilon and coefficient of that draw, as in
certify_measure); an "all" cell is one problem with --draws independent releases per point.

For each cell and target (the coefficients `female` and `schooling`, and certify_measure's 4-row table, read at its
widest row: certified when every row is, its ratio the largest of the four) the search walks the grid upward from its
smallest epsilon, --draws releases per (cell, target, epsilon), and stops at the first epsilon where BOTH
  - at least 90 % of the releases certify the curvature (the fallback's curvature bound exists and the released
    half-width is the curvature interval's, not the worst-case one: certify_measure's "certified"), and
  - the median, over the certified releases, of half-width / (1.96 SE) is <= 2, where
    SE = sqrt((H^-1)_jj / n) at theta(P_n) from that draw's non-private fit.
Every epsilon tried is recorded (certified share, median ratio). Writes a CSV (--csv; columns state, n, coefficient,
epsilon_needed (empty if the grid's top was reached without meeting both), certified_share and median_ratio at
epsilon_needed (at the grid's top if not met), draws) and prints Markdown (docs/experiments.md, "The width frontier").

    nice -n 19 python -m core.data.synthetic_pums --root /tmp/acs35 --state TX --state MI
    nice -n 19 python benchmarks/certify_frontier.py --root /tmp/acs35 --draws 100 --workers 2 \\
        --calibration analytic --csv docs/results/frontier.csv [--cells TX:20000,TX:all,MI:20000,MI:all]
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path

# one BLAS thread per process: the worker processes are the parallelism (set before numpy loads; spawned workers inherit
# it), which on 2 cores costs a release 2-5 times less CPU than OpenBLAS's threads
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from certify_measure import DELTA, LEVEL, SINGLE, TABLE, draw_problem, single, table  # noqa: E402

from core.mechanisms.split import CERTIFY_AT, PROBE_RATIO  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget  # noqa: E402
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION  # noqa: E402
from core.teaching.frontier import COLUMNS, GRID_TOP  # noqa: E402

GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, GRID_TOP)  # the Planner reads a cell not reached as over GRID_TOP
CELLS = "TX:20000,TX:50000,TX:all,MI:20000,MI:all"
NARROW = 2.0  # the width goal: median certified half-width <= NARROW x 1.96 SE
CHANCE = 0.9  # the certification goal: at least this share of releases certify
BASE_N = 20_000  # the reference n of the 1/sqrt(n) check
TABLE_TARGET = f"table of {len(TABLE)} (widest row)"  # certify_measure's table: certified when every row is
TARGETS = (*SINGLE, TABLE_TARGET)

def parse_cells(text: str) -> list[tuple[str, int | None]]:
    """'TX:20000,MI:all' -> [('TX', 20000), ('MI', None)]."""
    out = []
    for part in text.split(","):
        state, _, n = part.strip().partition(":")
        out.append((state.upper(), None if n.lower() == "all" else int(n)))
    return out


def task(job: tuple) -> list[dict]:
    """One job: (root, state, n or None, draw indices, sample seed, epsilon, coefficients, calibration)."""
    root, state, n, draws, seed, eps, coefs, calibration = job
    budget = make_budget(eps, DELTA, RELEASE_SPLIT)
    out = []
    for i in draws:
        problem, se196 = draw_problem(root, state, n, seed + i)
        for coef in coefs:
            r = (table(problem, se196, budget, calibration) if coef == TABLE_TARGET
                 else single(problem, se196, coef, budget, calibration))
            out.append(dict(state=state, n=n, rows=problem.n, coefficient=coef, epsilon=eps, draw=i,
                            certified=r["certified"], covered=r["covered"],
                            ratio=max(r["ratios"]) if r["ratios"] is not None else math.nan))
    return out


def point(records: list[dict]) -> dict:
    """One (cell, coefficient, epsilon): the certified share and the median certified ratio."""
    m = len(records)
    ratios = [r["ratio"] for r in records if r["certified"]]
    share = sum(r["certified"] for r in records) / m if m else math.nan
    median = statistics.median(ratios) if ratios else math.nan
    return dict(draws=m, share=share, median=median, met=share >= CHANCE and median <= NARROW,
                covered=sum(r["covered"] for r in records), rows=records[0]["rows"] if records else None)


def crossing(trail: list[tuple[float, dict]]) -> float:
    """The epsilon at which the median ratio reaches NARROW, interpolated log-log between the last two epsilons tried
    when the last one met both goals and the ratio alone had stopped the one before; nan otherwise."""
    if len(trail) < 2 or not trail[-1][1]["met"]:
        return math.nan
    (e0, p0), (e1, p1) = trail[-2], trail[-1]
    if p0["share"] < CHANCE or not (p0["median"] > NARROW >= p1["median"]):
        return math.nan
    t = math.log(p0["median"] / NARROW) / math.log(p0["median"] / p1["median"])
    return math.exp(math.log(e0) + t * (math.log(e1) - math.log(e0)))


def fmt(x: float, digits: int = 3) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--root", default="/tmp/acs35", help="folktables' root folder holding the TX and MI files")
    ap.add_argument("--cells", default=CELLS, help="comma-separated STATE:n or STATE:all (default %(default)s)")
    ap.add_argument("--grid", default=",".join(f"{e:g}" for e in GRID),
                    help="the epsilon grid, searched upward (default %(default)s)")
    ap.add_argument("--draws", type=int, default=100,
                    help="releases per (cell, coefficient, epsilon) (default %(default)s)")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (1: none)")
    ap.add_argument("--chunk", type=int, default=10, help="draws per job")
    ap.add_argument("--seed", type=int, default=20261127, help="the first sample's sample_seed")
    ap.add_argument("--csv", default=None, help="write the frontier here (e.g. docs/results/frontier.csv)")
    ap.add_argument("--calibration", choices=CALIBRATIONS, default=DEFAULT_CALIBRATION,
                    help="sigma(eps, delta) and objective perturbation's noise (core.privacy.gaussian)")
    args = ap.parse_args(argv)
    cells = parse_cells(args.cells)
    grid = sorted(float(e) for e in args.grid.split(","))
    keys = [(state, n, coef) for state, n in cells for coef in TARGETS]
    trails: dict = {k: [] for k in keys}
    active = set(keys)
    t0 = time.perf_counter()
    pool = get_context("spawn").Pool(args.workers) if args.workers > 1 else None
    try:
        for eps in grid:
            if not active:
                break
            jobs = []
            # the heaviest cells first, for the two workers' balance
            for state, n in sorted(cells, key=lambda c: -(c[1] or 10**9)):
                coefs = tuple(c for c in TARGETS if (state, n, c) in active)
                if coefs:
                    jobs += [(args.root, state, n, range(a, min(a + args.chunk, args.draws)), args.seed, eps, coefs,
                              args.calibration)
                             for a in range(0, args.draws, args.chunk)]
            t1 = time.perf_counter()
            parts = pool.map(task, jobs, chunksize=1) if pool else [task(j) for j in jobs]
            records = [r for p in parts for r in p]
            for key in [k for k in keys if k in active]:
                p = point([r for r in records if (r["state"], r["n"], r["coefficient"]) == key])
                trails[key].append((eps, p))
                if p["met"]:
                    active.discard(key)
            print(f"ε = {eps:g}: {len(records)} releases in {time.perf_counter() - t1:.0f} s", file=sys.stderr)
    finally:
        if pool:
            pool.close()
            pool.join()
    wall = time.perf_counter() - t0

    rows = []
    for key in keys:
        state, n, coef = key
        eps, p = trails[key][-1]
        rows.append(dict(state=state, n=p["rows"], coefficient=coef, epsilon_needed=eps if p["met"] else None,
                         certified_share=p["share"], median_ratio=p["median"], draws=p["draws"],
                         sampled=n is not None, crossing=crossing(trails[key])))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(COLUMNS)
            for r in rows:
                w.writerow([r["state"], r["n"], r["coefficient"],
                            "" if r["epsilon_needed"] is None else f"{r['epsilon_needed']:g}",
                            f"{r['certified_share']:.2f}",
                            "" if not math.isfinite(r["median_ratio"]) else f"{r['median_ratio']:.3f}", r["draws"]])

    releases = sum(p["draws"] for t in trails.values() for _, p in t)
    covered = sum(p["covered"] for t in trails.values() for _, p in t)
    print(f"{releases} releases in {wall:.0f} s on {args.workers} worker(s); {args.draws} draws per (cell, "
          f"coefficient, ε); δ = {DELTA:g}, split {RELEASE_SPLIT}, basic composition, fallback on, level {LEVEL:g}, "
          f"calibration {args.calibration!r}; "
          f"split rule PROBE_RATIO {PROBE_RATIO}, CERTIFY_AT {CERTIFY_AT}; the interval covered θⱼ(Pₙ) in {covered} "
          f"of {releases}\n")
    print("| state | n | coefficient | ε needed | certified | median half-width ÷ 1.96 SE (certified) | "
          "ε needed × √(n / 20,000) | ε at ratio 2, interpolated | the same × √(n / 20,000) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        scale = math.sqrt(r["n"] / BASE_N)
        need = r["epsilon_needed"]
        rows_text = f"{r['n']:,}" + (" (a sample per draw)" if r["sampled"] else " (all)")
        print(f"| {r['state']} | {rows_text} | {r['coefficient']} | "
              + (f"**{need:g}**" if need is not None else f"> {grid[-1]:g}")
              + f" | {r['certified_share']:.0%} | {fmt(r['median_ratio'])} | "
              f"{fmt(need * scale) if need is not None else '–'} | {fmt(r['crossing'])} | "
              f"{fmt(r['crossing'] * scale)} |")
    print()
    print("Every ε tried: median certified half-width ÷ 1.96 SE (certified share); bold where both goals hold.\n")
    tried = [e for e in grid if any(e == x for t in trails.values() for x, _ in t)]
    print("| state | n | coefficient | " + " | ".join(f"ε = {e:g}" for e in tried) + " |")
    print("|---|---|---|" + "---|" * len(tried))
    for key, r in zip(keys, rows, strict=True):
        by = dict(trails[key])
        cells_text = []
        for e in tried:
            if e not in by:
                cells_text.append("")
                continue
            text = f"{fmt(by[e]['median'])} ({by[e]['share']:.0%})"
            cells_text.append(f"**{text}**" if by[e]["met"] else text)
        print(f"| {r['state']} | {r['n']:,} | {r['coefficient']} | " + " | ".join(cells_text) + " |")
    print()
    # how the epsilon needed scales with n: 1/sqrt(n) is a slope of -0.5
    for state in dict.fromkeys(s for s, _ in cells):
        for coef in TARGETS:
            pts = [(math.log(r["n"]), math.log(r["crossing"])) for r in rows
                   if r["state"] == state and r["coefficient"] == coef and math.isfinite(r["crossing"])]
            if len(pts) >= 2:
                xm, ym = statistics.fmean(x for x, _ in pts), statistics.fmean(y for _, y in pts)
                slope = sum((x - xm) * (y - ym) for x, y in pts) / sum((x - xm) ** 2 for x, _ in pts)
                print(f"- {state} {coef}: ln(ε at ratio 2) against ln n, least-squares slope {slope:.2f} "
                      f"over {len(pts)} n (1/√n: −0.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
