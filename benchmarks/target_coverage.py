"""What each released interval says it covers, and whether it covers it: real releases on data nobody tuned to.

scikit-learn's breast-cancer data (569 rows, 30 features), loaded through the CSV route as a user would load it
(core.data.spec.CsvSpec from the bytes of a CSV with the label `y`), all 30 features or the first --features, each
scaled to [-1, 1] by its range (the cube domain), the logistic loss, coefficient `mean radius`. For each epsilon,
--draws releases of the publish default (make_budget(eps, 1e-6), the fallback on, level 0.95, noise from the
operating system), through core:

    c = certify(problem, j, budget, make_rng(None), True)
    release = finish(problem, c, make_rng(None), "analytic", 0.95, True).release

Per epsilon: how many releases name each target (core.mechanisms.release: FITTED, u^T theta(P_n), or RIDGE,
u^T theta_lam(P_n) of the fallback's ridge-regularised fit), and how many of each cover the coefficient they name,
with the Clopper-Pearson 95 % lower bound; and, for the ridge-named ones, how many would have covered the fitted
coefficient (what a reader who took the range for it would have been told). Prints Markdown (docs/experiments.md,
"Every interval names its target").

    nice -n 19 python benchmarks/target_coverage.py [--draws 200] [--epsilons 1,4] [--features 30]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data.spec import CsvSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.full_vector import regularised_fit_theta  # noqa: E402
from core.mechanisms.pipeline import certify, finish, make_rng, prepare_spec  # noqa: E402
from core.mechanisms.release import FITTED, RIDGE  # noqa: E402
from core.privacy.accounting import make_budget  # noqa: E402

TARGET = "mean radius"


def breast_cancer_csv(features: int) -> bytes:
    """The data as a user's CSV: its first `features` features, each scaled to [-1, 1] by its range, the label `y` in
    0/1."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    x = data.data[:, :features]
    lo, hi = x.min(axis=0), x.max(axis=0)
    scaled = 2 * (x - lo) / (hi - lo) - 1
    out = io.StringIO()
    out.write(",".join([*data.feature_names[:features], "y"]) + "\n")
    for row, label in zip(scaled, data.target, strict=True):
        out.write(",".join(repr(float(v)) for v in row) + f",{int(label)}\n")
    return out.getvalue().encode()


def lower(k: int, n: int) -> float:
    """The Clopper-Pearson 95 % lower bound of k successes in n (0 for k = 0)."""
    return 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--epsilons", default="1,4")
    ap.add_argument("--features", type=int, default=30, help="the first N of the 30 features (10: the means)")
    args = ap.parse_args()
    content = breast_cancer_csv(args.features)
    spec = CsvSpec.from_bytes("breast_cancer.csv", content)
    data = spec.load(content)
    j = data.feature_names.index(TARGET)
    problem = prepare_spec(data, ModelSpec("logistic").resolve(data.d), spec)
    fitted = float(problem.fit.theta[j])
    print(f"breast cancer, n = {data.n}, d = {data.d}, {TARGET}: fitted coefficient {fitted:.4g}\n")
    print("| ε | releases | named fitted | cover it (CP low) | named ridge | cover the ridge's (CP low) "
          "| would cover the fitted |")
    print("|---|---|---|---|---|---|---|")
    for eps in (float(e) for e in args.epsilons.split(",")):
        budget = make_budget(eps, 1e-6)
        named = {FITTED: [0, 0], RIDGE: [0, 0]}
        ridge_fitted = 0
        ridges: dict[float, float] = {}
        for _ in range(args.draws):
            c = certify(problem, j, budget, make_rng(None), True)
            r = finish(problem, c, make_rng(None), "analytic", 0.95, True).release
            if r.interval is None:
                continue
            lo, hi = r.interval
            target = r.interval_target
            if target == RIDGE:
                lam = r.fallback_lambda_reg
                if lam not in ridges:
                    ridges[lam] = float(regularised_fit_theta(problem, lam)[j])
                truth = ridges[lam]
                ridge_fitted += lo <= fitted <= hi
            else:
                truth = fitted
            named[target][0] += 1
            named[target][1] += lo <= truth <= hi
        (nf, cf), (nr, cr) = named[FITTED], named[RIDGE]
        print(f"| {eps:g} | {nf + nr} | {nf} | {cf} ({lower(cf, nf):.3f}) | {nr} | {cr} ({lower(cr, nr):.3f}) "
              f"| {ridge_fitted} |")


if __name__ == "__main__":
    main()
