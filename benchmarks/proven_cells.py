"""The fallback's proven intervals where the first-order curvature interval undercovered: how often each interval is
given, and whether it covers what it names.

Cells (the library's synthetic logistic data, cube domain, a fresh sample and fresh noise per draw, the publish
default make_budget(eps, 1e-6, (1, 1, 18)), fallback on, level 0.95, "analytic" calibration), through core:

    release = run_private(problem, 0, budget, make_rng(seed), "analytic", 0.95, fallback=True).release

- d = 1, n = 500, ||theta*|| = 3, eps = 2; d = 3, n = 700, ||theta*|| in {4, 5}, eps = 3 (where the first-order
  interval covered 0.78-0.89 among certified draws);
- the same designs at n = 5,000 and 20,000, where the proven interval is given;
- a 3-row table of the d = 3 design (core.mechanisms.table.release_table, rows together at 1 - 0.05/3).

Per cell: the share of releases given the curvature interval (named for u^T theta(P_n)) and its coverage of it with
the Clopper-Pearson 95 % lower bound, P(given and missed) (the theorem's bound is 0.05), the ridge-named intervals'
coverage of u^T theta_lam(P_n), and the median half-width over 1.96 SE (SE = sqrt((H^-1)_00 / n) at theta(P_n)) of
each kind. Prints Markdown (docs/experiments.md, "The proven curvature interval").

    nice -n 19 python benchmarks/proven_cells.py [--draws 400]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data.synthetic import synthetic  # noqa: E402
from core.mechanisms.full_vector import regularised_fit_theta  # noqa: E402
from core.mechanisms.pipeline import make_rng, prepare, run_private  # noqa: E402
from core.mechanisms.table import release_table  # noqa: E402
from core.privacy.accounting import make_budget  # noqa: E402

LEVEL = 0.95
CELLS = ((1, 500, 3.0, 2.0), (3, 700, 5.0, 3.0), (3, 700, 4.0, 3.0), (1, 5_000, 3.0, 2.0), (3, 20_000, 5.0, 3.0),
         (3, 20_000, 4.0, 3.0))


def cp_low(k: int, n: int) -> float:
    """The Clopper-Pearson 95 % lower bound on a proportion k/n."""
    return 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))


def draw(d: int, n: int, norm: float, eps: float, seed: int, rows: tuple[int, ...] | None) -> list[tuple]:
    """One sample and one release: per row (given, covered what it names, half-width / 1.96 SE)."""
    data = synthetic(n, d, "logistic", theta_norm=norm, seed=seed)
    p = prepare(data.X, data.y, "logistic")
    se = np.sqrt(np.diag(np.linalg.inv(p.fit.hessian)) / n) * 1.96
    budget = make_budget(eps, 1e-6, (1, 1, 18))
    if rows is None:
        r = run_private(p, 0, budget, make_rng(seed + 1_000_000), "analytic", LEVEL, fallback=True).release
        if r.status != "fallback":
            return [("released", _in(r.interval, p.fit.theta[0]), (r.interval[1] - r.interval[0]) / 2 / se[0])]
        halves, given, lam = [(r.interval[1] - r.interval[0]) / 2], [r.fallback_interval is not None], \
            r.fallback_lambda_reg
        values = [r.value]
    else:
        t = release_table(p, rows, budget, make_rng(seed + 1_000_000), "analytic", LEVEL, fallback=True)
        if t.status != "fallback":
            return [("released", _in(iv, p.fit.theta[j]), h / se[j])
                    for j, iv, h in zip(rows, t.intervals, t.half_widths, strict=True)]
        halves, given, lam, values = list(t.half_widths), [ci is not None for ci in t.fallback.intervals], \
            t.fallback.lambda_reg, list(t.values)
    ridge = regularised_fit_theta(p, lam) if not all(given) else None
    out = []
    for i, j in enumerate([0] if rows is None else rows):
        target = p.fit.theta[j] if given[i] else ridge[j]
        out.append(("given" if given[i] else "ridge", _in((values[i] - halves[i], values[i] + halves[i]), target),
                    halves[i] / se[j]))
    return out


def _in(interval, target) -> bool:
    return bool(interval[0] <= target <= interval[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--draws", type=int, default=400)
    args = ap.parse_args(argv)
    print("| cell | draws | given | given: covered (CP low) | P(given and missed) | ridge-named: covered (CP low) | "
          "median ½-width ÷ 1.96 SE: given / ridge |")
    print("|---|---|---|---|---|---|---|")
    cells = [(c, None) for c in CELLS] + [((3, 700, 4.0, 3.0), (0, 1, 2)), ((3, 20_000, 4.0, 3.0), (0, 1, 2))]
    for (d, n, norm, eps), rows in cells:
        found = [draw(d, n, norm, eps, 20261129 + i, rows) for i in range(args.draws)]
        # a table's release is given when every row is; covered when all rows cover at once
        outcomes = [(all(k == "given" for k, _, _ in f), all(c for _, c, _ in f), max(h for _, _, h in f),
                     any(k == "released" for k, _, _ in f)) for f in found]
        given = [o for o in outcomes if o[0] and not o[3]]
        ridge = [o for o in outcomes if not o[0] and not o[3]]
        hit_g, hit_r = sum(o[1] for o in given), sum(o[1] for o in ridge)
        med = [f"{statistics.median(o[2] for o in group):.3g}" if group else "–" for group in (given, ridge)]
        name = f"d={d}, n={n:,}, ‖θ*‖={norm:g}, ε={eps:g}" + ("" if rows is None else f", table of {len(rows)}")
        print(f"| {name} | {len(outcomes)} | {len(given)} | "
              + (f"{hit_g}/{len(given)} = {hit_g / len(given):.3f} ({cp_low(hit_g, len(given)):.3f})" if given else "–")
              + f" | {(len(given) - hit_g) / len(outcomes):.4f} | "
              + (f"{hit_r}/{len(ridge)} = {hit_r / len(ridge):.3f} ({cp_low(hit_r, len(ridge)):.3f})" if ridge else "–")
              + f" | {med[0]} / {med[1]} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
