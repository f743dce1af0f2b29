"""Certifying the fallback's curvature with the current split, measured by real releases on SYNTHETIC census files.

When the test (14) fails, the publish default releases by objective perturbation (core.mechanisms.fallback) and spends
part of the fallback's budget on a private curvature bound at the released point (core.mechanisms.curvature), which
gives the interval its width, in shares chosen by core.mechanisms.split's rule from a private stand-in for the
curvature (for one coefficient and for a table of k >= 2 rows alike). This script
draws releases through core, nothing re-implemented, and counts what they give:

- one coefficient (`female`, `schooling`), as the preview and the Release button draw it:
      c = certify(problem, j, budget, make_rng(None), True)
      release = finish(problem, c, make_rng(None), calibration, 0.95, True).release
  certified: release.fallback_curvature.bound is not None and the released half-width is not the ridge coefficient's
  (core.mechanisms.fallback.fallback_half_width at the release's lam and s), i.e. the interval is the proven
  curvature interval (a bound that does not localise the fit, q >= 1, leaves the ridge's interval: counted apart as
  "gated");
- a 4-row table (`female,schooling,working_age,hours`):
      release_table(problem, TABLE, budget, make_rng(None), calibration, 0.95, fallback=True)
  certified: the fallback ran and every row's interval is a curvature interval (table.fallback.intervals holds no
  None); each row is at level 1 - 0.05/4 (Bonferroni);

with budget = make_budget(eps, 1e-6, RELEASE_SPLIT) (split (1, 1, 18), basic composition), the fallback on, level 0.95,
calibration --calibration (the app's default, "analytic": the exact σ and the smaller noise of docs/privacy.md,
"Objective perturbation, calibrated"; or "paper"), and the privacy noise from the operating system (make_rng(None), as
in publish mode), so a run does not replay draw for draw. Data through core.data.spec.AcsSpec in the encoding
--encoding (default the app's, centred) and the model as the app builds it (ModelSpec("logistic", spec.default_domain,
None, 0, None).resolve(d, spec.public_radius): the encoding's ball, ||x||_2 <= 2.3503 centred, <= 3 the paper's).
Cells: TX with a fresh sample of --n rows per draw (without replacement, sample_seed = --seed + draw index; the sample
serves every epsilon and target of that draw), MI all filtered rows, TX all filtered rows (one problem each, --draws
independent releases per epsilon and target).

Per (cell, epsilon, target): releases, bottoms, passes of the test (14) (Algorithm 5's interval), the certified share
with its 95 % Clopper-Pearson interval; coverage of u^T theta(P_n) (problem.fit.theta, the non-private fit on that
draw's rows; for the table all four rows at once) by the released interval over all releases (a bottom counts as a
miss), with its CP lower bound; the median released half-width (the table: of its widest row relative to 1.96 SE, and
per row in a second table); among certified releases the median and 90th percentile of half-width / (1.96 SE) and the
share <= 2, where SE = sqrt((H^-1)_jj / n) at theta(P_n) from the fit's Hessian (the logistic model's variance, as
the fit's Hessian gives it). eps90: the smallest grid epsilon at which >= 90 % certify. Prints Markdown
(docs/experiments.md, "Certifying the curvature with the new split, measured").

    nice -n 19 python -m core.data.synthetic_pums --root /tmp/acs35 --state TX --state MI
    nice -n 19 python benchmarks/certify_measure.py --root /tmp/acs35 [--draws 400] [--tx-all-draws N] [--workers 2]
        [--coverage together|each] [--tables-only]

With --coverage each the table's rows are each at level 0.95 (core.mechanisms.table's "each") and its coverage is its
least-covered row's; --tables-only draws the table alone.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parallel import map_jobs  # noqa: E402

from core.data.encoding import DEFAULT_ENCODING, ENCODINGS, RADII  # noqa: E402
from core.data.spec import AcsSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.fallback import fallback_half_width  # noqa: E402
from core.mechanisms.pipeline import certify, finish, make_rng, prepare_spec  # noqa: E402
from core.mechanisms.release import BOTTOM, FALLBACK, RELEASED  # noqa: E402
from core.mechanisms.split import CERTIFY_AT, PROBE_RATIO  # noqa: E402
from core.mechanisms.table import COVERAGES, EACH, TOGETHER, release_table  # noqa: E402
from core.methods.compare import rate  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget  # noqa: E402
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION  # noqa: E402

DELTA, LEVEL, CALIBRATION, TOL = 1e-6, 0.95, DEFAULT_CALIBRATION, 1e-9
SINGLE = ("female", "schooling")
TABLE = ("female", "schooling", "working_age", "hours")
TABLE_NAME = "table (" + ", ".join(TABLE) + ")"
NARROW = 2.0  # the width goal: half-width <= NARROW x 1.96 SE
CHANCE = 0.9  # eps90: the smallest grid epsilon at which this share certify
# (cell key, state, sample rows or None for all, epsilon grid, eps90 goal)
CELLS = (("TX 20k", "TX", 20_000, (3.0, 4.0, 6.0), 6.0),
         ("MI all", "MI", None, (2.0, 3.0, 4.0), 4.0),
         ("TX all", "TX", None, (0.5, 0.75, 1.0), 1.0))
# The old rule's eps90 (curvature share 0.1 of the fallback's epsilon, step 1 0.6 of it; the table's shares (0.4, 0.7))
# and the earlier study's computed eps90 for the current settings (docs/experiments.md, "Certifying the curvature:
# where the budget goes": its "today" and "combined" rows).
OLD = {("TX 20k", "single"): 11.7, ("MI all", "single"): 12.8, ("TX all", "single"): 1.62,
       ("TX 20k", "table"): 5.19, ("MI all", "table"): 5.92, ("TX all", "table"): 0.77}
PREDICTED = {("TX 20k", "single"): 2.34, ("MI all", "single"): 2.91, ("TX all", "single"): 0.35,
             ("TX 20k", "table"): 2.64, ("MI all", "table"): 3.35, ("TX all", "table"): 0.39}

_PROBLEMS: dict = {}  # a worker's whole-file problems, prepared once


def draw_problem(root: str, state: str, n: int | None, sample_seed: int, encoding: str = DEFAULT_ENCODING):
    """A draw's problem and 1.96 SE: a fresh sample of n rows (seeded), or the whole file, prepared once a worker."""
    if n is not None:
        return problem_of(root, state, n, sample_seed, encoding)
    if (root, state, encoding) not in _PROBLEMS:
        _PROBLEMS[(root, state, encoding)] = problem_of(root, state, None, None, encoding)
    return _PROBLEMS[(root, state, encoding)]


def problem_of(root: str, state: str, n: int | None, sample_seed: int | None, encoding: str = DEFAULT_ENCODING,
               with_replacement: bool = False):
    """The problem as the app prepares census data (ui.loaded): the encoding's ball, logistic loss, lam_reg = 0, with
    the non-private 1.96 SE of every coordinate at theta(P_n): 1.96 sqrt((H^-1)_jj / n)."""
    spec = AcsSpec(states=state, year=2018, horizon="1-Year", root=root, n=n, sample_seed=sample_seed,
                   with_replacement=with_replacement, encoding=encoding)
    data = spec.load()
    model = ModelSpec("logistic", spec.default_domain, None, 0.0, None).resolve(data.d, spec.public_radius)
    problem = prepare_spec(data, model, spec)
    se196 = 1.96 * np.sqrt(np.diag(np.linalg.inv(problem.fit.hessian)) / problem.n)
    return problem, se196


def single(problem, se196: np.ndarray, coefficient: str, budget, calibration: str = CALIBRATION) -> dict:
    """One coefficient's release (certify, then finish), what it certified and whether it covers theta_j(P_n)."""
    j = problem.coordinate(coefficient)
    c = certify(problem, j, budget, make_rng(None), True)
    r = finish(problem, c, make_rng(None), calibration, LEVEL, True).release
    out = dict(status=r.status, certified=False, gated=False, covered=False, halves=None, ratios=None)
    if r.interval is None:
        return out
    lo, hi = r.interval
    half = (hi - lo) / 2.0
    truth = float(problem.fit.theta[j])
    out.update(covered=bool(lo <= truth <= hi), halves=(half,), ratios=(half / se196[j],))
    cv = r.fallback_curvature
    if r.status == FALLBACK and cv is not None and cv.bound is not None:
        wide = fallback_half_width(r.fallback_lambda_reg, r.fallback_noise_scale, LEVEL, problem.geometry)
        used = not math.isclose(half, wide, rel_tol=TOL, abs_tol=1e-12)
        # core's own record of which interval it gave: the curvature interval's parts
        noted = r.fallback_interval is not None
        out.update(certified=used, gated=not used, note_agrees=used == noted)
    return out


def table(problem, se196: np.ndarray, budget, calibration: str = CALIBRATION, coverage: str = TOGETHER) -> dict:
    """One 4-row table (release_table, fallback on, its intervals by `coverage`): certified when every row's interval
    is a curvature interval; covered when all four rows cover their theta_j(P_n) at once, and each row's own cover."""
    t = release_table(problem, TABLE, budget, make_rng(None), calibration, LEVEL, fallback=True, coverage=coverage)
    out = dict(status=t.status, certified=False, gated=False, covered=False, halves=None, ratios=None,
               rows_covered=(False,) * len(TABLE))
    if t.intervals is None:
        return out
    idx = list(t.indices)
    theta = problem.fit.theta
    each = tuple(bool(lo <= theta[j] <= hi) for (lo, hi), j in zip(t.intervals, idx, strict=True))
    out.update(covered=all(each), rows_covered=each,
               halves=tuple(t.half_widths), ratios=tuple(h / se196[j] for h, j in zip(t.half_widths, idx, strict=True)))
    if t.status == FALLBACK:
        cs = t.fallback.curvatures
        out["certified"] = all(ci is not None for ci in t.fallback.intervals)
        out["gated"] = not out["certified"] and all(c.bound is not None for c in cs)
    return out


def task(job: tuple) -> list[dict]:
    """One job: (cell key, root, state, n or None, draw indices, sample seed, epsilons, calibration, encoding, the
    table's coverage, whether to draw the table alone)."""
    key, root, state, n, draws, seed, epsilons, calibration, encoding, coverage, tables_only = job
    out = []
    for i in draws:
        t0 = time.perf_counter()
        problem, se196 = draw_problem(root, state, n, seed + i, encoding)
        for eps in epsilons:
            budget = make_budget(eps, DELTA, RELEASE_SPLIT)
            for coef in () if tables_only else SINGLE:
                out.append(dict(single(problem, se196, coef, budget, calibration), cell=key, rows=problem.n,
                                epsilon=eps, target=coef, draw=i))
            out.append(dict(table(problem, se196, budget, calibration, coverage), cell=key, rows=problem.n,
                            epsilon=eps, target=TABLE_NAME, draw=i))
        out[-1]["seconds"] = time.perf_counter() - t0
    return out


def cp(k: int, m: int) -> str:
    r = rate(k, m)
    return "–" if r is None else f"{k}/{m} = **{k / m:.1%}** ({r.low:.1%}–{r.high:.1%})"


def cp_low(k: int, m: int) -> float:
    r = rate(k, m)
    return math.nan if r is None else r.low


def quantile(xs: list[float], q: float) -> float:
    return float(np.quantile(xs, q)) if xs else math.nan


def fmt(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.3g}"


def summarise(records: list[dict], cells: tuple, targets: tuple, coverage: str) -> tuple[list[str], dict]:
    """The main table, the table's rows, eps90 and the goals. Returns (lines, facts for the goals). A table's coverage
    is of all rows at once ("together"), or its least-covered row's ("each")."""
    by = defaultdict(list)
    for rec in records:
        by[(rec["cell"], rec["epsilon"], rec["target"])].append(rec)
    lines = ["| cell | rows | ε | target | releases | ⊥ | (14) passed | certified (95 % CP) | bound, gated | "
             "coverage of uᵀθ(Pₙ) (CP low) | median half-width | certified: median / p90 half-width ÷ 1.96 SE | "
             "certified: ≤ 2 × 1.96 SE |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows_lines = ["| cell | ε | row | coverage of this row (CP low) | median half-width (all) | certified: median / "
                  "p90 half-width ÷ 1.96 SE | certified: ≤ 2 × 1.96 SE |", "|---|---|---|---|---|---|---|"]
    facts = dict(coverage=[], width=[], eps90={})
    for key, _, n, grid, _goal in cells:
        for target in targets:
            kind = "table" if target == TABLE_NAME else "single"
            e90 = math.inf
            for eps in grid:
                rs = by[(key, eps, target)]
                m = len(rs)
                got = [r for r in rs if r["halves"] is not None]
                cert = [r for r in rs if r["certified"]]
                cov = (min(sum(r["rows_covered"][i] for r in rs) for i in range(len(TABLE)))
                       if kind == "table" and coverage == EACH else sum(r["covered"] for r in rs))
                if m and len(cert) >= CHANCE * m:
                    e90 = min(e90, eps)
                rows = (f"{n:,} (a fresh sample per draw)" if n is not None
                        else f"{rs[0]['rows']:,} (all)" if rs else "–")
                if kind == "single":
                    ratios = [r["ratios"][0] for r in cert]
                    halves = [r["halves"][0] for r in got]
                    half_text = fmt(statistics.median(halves)) if halves else "–"
                else:  # the widest row relative to its 1.96 SE
                    ratios = [max(r["ratios"]) for r in cert]
                    halves = [max(r["ratios"]) for r in got]
                    half_text = (f"widest row {fmt(statistics.median(halves))} × 1.96 SE" if halves else "–")
                narrow = sum(x <= NARROW for x in ratios)
                lines.append(
                    f"| {key} | {rows} | {eps:g} | {target} | {m} | {sum(r['status'] == BOTTOM for r in rs)} | "
                    f"{sum(r['status'] == RELEASED for r in rs)} | {cp(len(cert), m)} | "
                    f"{sum(r['gated'] for r in rs)} | {cov}/{m} = {cov / m:.1%} ({cp_low(cov, m):.3f}) | "
                    f"{half_text} | {fmt(quantile(ratios, 0.5))} / {fmt(quantile(ratios, 0.9))} | "
                    f"{narrow}/{len(ratios)} |")
                facts["coverage"].append((key, eps, target, cov, m, cp_low(cov, m)))
                if kind == "single":
                    facts["width"].append((key, eps, target, quantile(ratios, 0.5), quantile(ratios, 0.9), len(cert)))
                else:
                    for r_i, name in enumerate(TABLE):
                        rr = [r["ratios"][r_i] for r in cert]
                        hh = [r["halves"][r_i] for r in got]
                        c_i = sum(r["rows_covered"][r_i] for r in rs)
                        rows_lines.append(
                            f"| {key} | {eps:g} | {name} | {c_i}/{m} ({cp_low(c_i, m):.3f}) | "
                            f"{fmt(quantile(hh, 0.5))} | {fmt(quantile(rr, 0.5))} / "
                            f"{fmt(quantile(rr, 0.9))} | {sum(x <= NARROW for x in rr)}/{len(rr)} |")
                        facts["width"].append((key, eps, f"table: {name}", quantile(rr, 0.5), quantile(rr, 0.9),
                                               len(cert)))
            facts["eps90"][(key, target)] = e90
    return lines + [""] + rows_lines, facts


def goal_lines(facts: dict, cells: tuple, targets: tuple) -> list[str]:
    out = ["| cell | target | ε90 measured (grid) | goal | met | old rule | earlier study's computed ε90, current "
           "settings |", "|---|---|---|---|---|---|---|"]
    for key, _, _, grid, goal in cells:
        for target in targets:
            kind = "table" if target == TABLE_NAME else "single"
            e = facts["eps90"][(key, target)]
            shown = f"{e:g}" if math.isfinite(e) else f"> {max(grid):g}"
            out.append(f"| {key} | {target} | {shown} | ≤ {goal:g} | {'yes' if e <= goal else 'no'} | "
                       f"{OLD[(key, kind)]:g} | {PREDICTED[(key, kind)]:g} |")
    cov_bad = [f for f in facts["coverage"] if not (f[3] >= 0.95 * f[4] and f[5] >= 0.93)]
    out += ["", f"Coverage ≥ 95 % with CP lower bound ≥ 0.93: {len(facts['coverage']) - len(cov_bad)} of "
                f"{len(facts['coverage'])} (cell, ε, target) met."]
    out += [f"- not met: {k} ε = {e:g} {t}: {c}/{m} ({c / m:.1%}), CP low {lo:.3f}" for k, e, t, c, m, lo in cov_bad]
    wide = [f for f in facts["width"] if f[5] and not f[3] <= NARROW]
    out += ["", f"Median certified half-width ≤ {NARROW:g} × 1.96 SE: "
                f"{sum(1 for f in facts['width'] if f[5]) - len(wide)} of {sum(1 for f in facts['width'] if f[5])} "
                "(cell, ε, target or row) with certified releases met."]
    out += [f"- not met: {k} ε = {e:g} {t}: median {med:.3g} (p90 {p90:.3g}), {med / NARROW:.2f} × the goal"
            for k, e, t, med, p90, _ in wide]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/tmp/acs35", help="folktables' root folder holding the TX and MI files")
    ap.add_argument("--n", type=int, default=20_000, help="the TX sample's rows")
    ap.add_argument("--draws", type=int, default=400, help="draws per (cell, ε, target)")
    ap.add_argument("--tx-all-draws", type=int, default=None, help="draws for TX all rows (default --draws)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=20)
    ap.add_argument("--seed", type=int, default=20261127, help="the first TX sample's sample_seed")
    ap.add_argument("--calibration", choices=CALIBRATIONS, default=CALIBRATION,
                    help="sigma(eps, delta) and objective perturbation's noise (core.privacy.gaussian)")
    ap.add_argument("--encoding", choices=ENCODINGS, default=DEFAULT_ENCODING, help="the census encoding "
                    "(core.data.encoding)")
    ap.add_argument("--coverage", choices=COVERAGES, default=TOGETHER, help="the table's intervals: all rows at once "
                    "(coverage of all four together) or each row on its own (coverage of the least-covered row)")
    ap.add_argument("--tables-only", action="store_true", help="draw the 4-row table alone, not the coefficients")
    args = ap.parse_args(argv)
    targets = (TABLE_NAME,) if args.tables_only else (*SINGLE, TABLE_NAME)
    cells = tuple((key, state, args.n if n is not None else None, grid, goal) for key, state, n, grid, goal in CELLS)
    draws = {key: (args.tx_all_draws or args.draws) if key == "TX all" else args.draws for key, *_ in cells}
    jobs = [(key, args.root, state, n, range(a, min(a + args.chunk, draws[key])), args.seed, grid, args.calibration,
             args.encoding, args.coverage, args.tables_only)
            for key, state, n, grid, _ in reversed(cells) for a in range(0, draws[key], args.chunk)]
    t0 = time.perf_counter()
    parts = map_jobs(task, jobs, args.workers)
    wall = time.perf_counter() - t0
    records = [r for p in parts for r in p]
    busy = defaultdict(float)
    for r in records:
        busy[r["cell"]] += r.get("seconds", 0.0)
    disagree = sum(1 for r in records if r.get("note_agrees") is False)
    print(f"{len(records)} releases in {wall:.0f} s on {args.workers} worker(s) (worker seconds: "
          + ", ".join(f"{k} {v:.0f}" for k, v in busy.items()) + f"); δ = {DELTA:g}, split {RELEASE_SPLIT}, basic "
          f"composition, fallback on, level {LEVEL:g}, calibration {args.calibration!r}, "
          f"encoding {args.encoding!r} (r = {RADII[args.encoding]:g}); "
          f"shares by core.mechanisms.split (PROBE_RATIO {PROBE_RATIO}, CERTIFY_AT {CERTIFY_AT}); draws per (cell, ε, "
          "target): "
          + ", ".join(f"{k} {v}" for k, v in draws.items())
          + "; certified single releases whose record (fallback_interval) disagrees with the half-width check: "
          + f"{disagree}\n")
    lines, facts = summarise(records, cells, targets, args.coverage)
    print("\n".join(lines))
    print()
    print("\n".join(goal_lines(facts, cells, targets)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
