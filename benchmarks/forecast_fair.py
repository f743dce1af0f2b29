"""The preview's forecast on data nobody tuned to: statsmodels' `fair` data, the chance of an informative interval it
states against the share observed.

The data as a user loads them (core.data.spec.CsvSpec from a CSV's bytes): the label y = 1 when `affairs` > 0, the
eight other columns scaled to [-1, 1] by their ranges (the cube), the logistic loss, coefficient `rate_marriage`
(n = 6,366, d = 8). Per epsilon, --draws releases of the publish default (make_budget(eps, 1e-6), fallback on, level
0.95, noise from the operating system), drawn as the preview and the Release button draw them:

    c = certify(problem, j, budget, make_rng(None), True)
    f = from_certificates(problem, c, "analytic", 0.95, True)
    release = finish(problem, c, make_rng(None), "analytic", 0.95, True).release

Counted: the mean stated chance of an informative interval (f.informative: half-width below ln 100) against the share
of releases whose half-width was below it; how many informative releases were warned, and how many wide ones; how
often the proven curvature interval was given. Needs statsmodels for the data (`pip install statsmodels`). Prints
Markdown (docs/experiments.md, "The forecast on the fair data").

    python benchmarks/forecast_fair.py [--draws 200] [--epsilons 4,8]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data.spec import CsvSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.forecast import LOGISTIC_PLAUSIBLE, from_certificates  # noqa: E402
from core.mechanisms.pipeline import certify, finish, make_rng, prepare_spec  # noqa: E402
from core.privacy.accounting import make_budget  # noqa: E402

TARGET = "rate_marriage"


def fair_csv() -> bytes:
    """statsmodels' fair data as a user's CSV (module docstring)."""
    import statsmodels.api as sm

    d = sm.datasets.fair.load_pandas().data
    y = (d.pop("affairs") > 0).astype(int)
    x = d.to_numpy(float)
    lo, hi = x.min(axis=0), x.max(axis=0)
    scaled = 2 * (x - lo) / (hi - lo) - 1
    out = io.StringIO()
    out.write(",".join([*d.columns, "y"]) + "\n")
    for row, label in zip(scaled, y, strict=True):
        out.write(",".join(repr(float(v)) for v in row) + f",{label}\n")
    return out.getvalue().encode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--epsilons", default="4,8")
    args = ap.parse_args()
    content = fair_csv()
    spec = CsvSpec.from_bytes("fair.csv", content)
    data = spec.load(content)
    j = data.feature_names.index(TARGET)
    problem = prepare_spec(data, ModelSpec("logistic").resolve(data.d), spec)
    print(f"fair, n = {data.n}, d = {data.d}, {TARGET}: fitted coefficient {problem.fit.theta[j]:.4g} (not private)\n")
    print("| ε | releases | curvature interval given | stated chance informative (mean) | observed informative | "
          "informative warned | wide warned | median half-width |")
    print("|---|---|---|---|---|---|---|---|")
    for eps in (float(e) for e in args.epsilons.split(",")):
        budget = make_budget(eps, 1e-6)
        rows = []
        for _ in range(args.draws):
            c = certify(problem, j, budget, make_rng(None), True)
            f = from_certificates(problem, c, "analytic", 0.95, True)
            r = finish(problem, c, make_rng(None), "analytic", 0.95, True).release
            if r.interval is not None:
                half = (r.interval[1] - r.interval[0]) / 2
                rows.append((half < LOGISTIC_PLAUSIBLE, f.uninformative, f.informative, r.fallback_interval, half))
        informative = [w for i, w, _, _, _ in rows if i]
        wide = [w for i, w, _, _, _ in rows if not i]
        stated = [p for _, _, p, _, _ in rows if p is not None]
        print(f"| {eps:g} | {len(rows)} | {sum(ci is not None for *_, ci, _ in rows)} | "
              f"{statistics.fmean(stated) if stated else float('nan'):.3f} ({len(stated)} stated) | "
              f"{len(informative) / len(rows):.3f} | {sum(informative)}/{len(informative)} | "
              f"{sum(wide)}/{len(wide)} | {statistics.median(h for *_, h in rows):.3g} |")


if __name__ == "__main__":
    main()
