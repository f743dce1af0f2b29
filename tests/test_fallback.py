"""Algorithm 5 with fallback: objective perturbation on the unspent budget when (14) fails, with its curvature."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from core.data import synthetic
from core.mechanisms.curvature import curvature_interval, ridge_quantile
from core.mechanisms.fallback import fallback_half_width
from core.mechanisms.forecast import worst_case
from core.mechanisms.full_vector import objective_perturbation_parameters, regularised_fit_theta
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.release import ALGORITHM5_NOTE, BOTTOM_NOTE
from core.mechanisms.split import (
    DELTA_SHARE,
    SHARE_GRID,
    choose_shares,
    fallback_ridge,
    release_event_budget,
    unspent_budget,
)
from core.mechanisms.table import release_table
from core.privacy.accounting import basic_composition, make_budget, release_event_delta, split_budget
from core.privacy.gaussian import normal_quantile
from core.report import private_report, release_document

FALLBACK_KEYS = {"branch", "interval_note", "fallback_epsilon", "fallback_delta", "fallback_lambda_reg",
                 "fallback_noise_scale"}


@pytest.fixture(scope="module")
def small_problem():
    """Too small to certify anything: lambda_hat_min = 0 at every budget used here."""
    data = synthetic(400, 5, "robust", seed=2)
    return prepare(data.X, data.y)


def test_branch_taken_exactly_when_the_test_fails(robust_problem):
    seen = set()
    for eps in (2.0, 3.0, 3.5, 4.0, 6.0):
        b = split_budget(eps, 1e-6)
        for seed in range(6):
            run = run_private(robust_problem, 0, b, make_rng(seed), fallback=True)
            r = run.release
            seen.add(run.test.passed)
            if run.test.passed:
                assert r.status == "released" and r.branch == "algorithm5" and r.fallback_lambda_reg is None
                assert r.interval_note == ALGORITHM5_NOTE
            else:
                assert r.status == "fallback" and r.branch == "objective_perturbation"
                assert r.reason == run.test.reason and r.value is not None
                assert r.interval[0] < r.value < r.interval[1]
                assert "uᵀθ(Pₙ), the coefficient fitted" in r.interval_note or "uᵀθ_λ(Pₙ)" in r.interval_note
    assert seen == {True, False}  # both branches were exercised


def test_fallback_when_lambda_hat_min_is_zero(small_problem):
    b = split_budget(4.0, 1e-6)
    run = run_private(small_problem, 0, b, make_rng(3), fallback=True)
    assert run.lambda_min.lambda_hat == 0 and run.lambda_max is None and not run.test.passed
    r = run.release
    assert r.status == "fallback" and r.value is not None
    c = r.fallback_curvature
    ci = curvature_interval(small_problem, None, c, r.fallback_noise_scale, r.fallback_lambda_reg, 0.95) \
        if c.bound is None else None
    assert c.bound is None and ci is None  # 400 rows: too few to certify the curvature at this budget
    # without a curvature interval the half-width is the ridge coefficient's t_d s / lam, t_d the 0.95 quantile of
    # (||Z|| + |Z_1|)/2 (plus the solver's negligible tolerance)
    half = (r.interval[1] - r.interval[0]) / 2
    expected = ridge_quantile(small_problem.d, 0.95) * r.fallback_noise_scale / r.fallback_lambda_reg
    assert half == pytest.approx(expected, rel=1e-9)
    assert "uᵀθ_λ(Pₙ)" in r.interval_note and "^T" not in r.interval_note
    plain = run_private(small_problem, 0, b, make_rng(3))
    assert plain.release.status == "bottom" and plain.release.value is None


def test_fallback_spends_exactly_the_release_event_after_stage_two(robust_problem):
    for b in (split_budget(2.0, 1e-6), split_budget(1.5, 1e-5, (1, 2, 3))):
        run = run_private(robust_problem, 1, b, make_rng(0), fallback=True)
        r = run.release
        assert r.status == "fallback" and run.lambda_min.lambda_hat > 0
        assert (r.fallback_epsilon, r.fallback_delta) == release_event_budget(b)
        assert r.fallback_epsilon == 2 * b.release.epsilon
        assert r.fallback_delta == release_event_delta(b.release) == (1 + math.exp(b.release.epsilon)) * b.release.delta
        # objective perturbation gets all but the curvature's share, chosen by the split rule at lambda_hat_min
        share, delta_share, _ = r.fallback_shares
        assert r.fallback_shares == choose_shares(robust_problem.geometry, robust_problem.n, 1, r.fallback_epsilon,
                                                  r.fallback_delta, 0.95, 0.0, "paper", run.lambda_min.lambda_hat)
        assert r.fallback_probe is None  # lambda_hat_min > 0: no probe
        lam, s = objective_perturbation_parameters(robust_problem, r.fallback_epsilon - share * r.fallback_epsilon,
                                                   r.fallback_delta - delta_share * r.fallback_delta)
        assert (r.fallback_lambda_reg, r.fallback_noise_scale) == (lam, s)
        op_epsilon = (1 - share) * r.fallback_epsilon
        assert lam == pytest.approx(4 * robust_problem.geometry.G1 / (robust_problem.n * op_epsilon))
        # stages 1-2 plus the fallback compose to the same total as stages 1-2 plus Algorithm 5's release
        eps = b.lambda_min.epsilon + b.lambda_max.epsilon + r.fallback_epsilon
        dlt = math.exp(b.lambda_min.epsilon + b.lambda_max.epsilon) * (b.lambda_min.delta + b.lambda_max.delta)
        assert (eps, dlt + r.fallback_delta) == basic_composition(b.lambda_min, b.lambda_max, b.release)


def test_the_fallback_draws_objective_perturbation_by_the_plans_calibration(robust_problem):
    """Under "analytic" the fallback's s is op_parameters' analytic one (smaller), with the same lam; so is a
    table's, and the forecast's worst case reads the same (lam, s)."""
    b = split_budget(2.0, 1e-6)
    runs = {cal: run_private(robust_problem, 1, b, make_rng(0), cal, fallback=True).release
            for cal in ("paper", "analytic")}
    for cal, r in runs.items():
        assert r.status == "fallback" and r.calibration == cal
        op = (r.fallback_epsilon * (1 - r.fallback_shares[0]), r.fallback_delta * (1 - r.fallback_shares[1]))
        assert (r.fallback_lambda_reg, r.fallback_noise_scale) == objective_perturbation_parameters(
            robust_problem, *op, cal, fallback_ridge(cal))
        c = 3.0 if cal == "analytic" else 4.0  # the analytic calibration proves a smaller ridge; the paper's its own
        assert r.fallback_lambda_reg == pytest.approx(c * robust_problem.geometry.G1 / (robust_problem.n * op[0]))
    assert runs["analytic"].fallback_noise_scale < 0.6 * runs["paper"].fallback_noise_scale
    t = release_table(robust_problem, (0, 1), b, make_rng(0), "analytic", fallback=True)
    assert t.status == "fallback"
    assert t.fallback.noise_scale == t.fallback.split.op_parameters(robust_problem.geometry, robust_problem.n,
                                                                    "analytic")[1]
    # before any certificate the worst case is the widest the rule may give: the largest over its grid of shares
    g, n = robust_problem.geometry, robust_problem.n
    eps, dlt = unspent_budget(b, 0.0, probed=True)
    widest = max(fallback_half_width(*objective_perturbation_parameters(
        robust_problem, eps * (1 - share), dlt * (1 - DELTA_SHARE), "analytic", 3.0), 0.95, g) for share in SHARE_GRID)
    assert worst_case(g, robust_problem.model, n, b, "analytic", 0.95)[0] == widest


def test_same_seed_reproduces(logistic_problem):
    b = split_budget(1.0, 1e-6)
    one = run_private(logistic_problem, 2, b, make_rng(42), fallback=True)
    two = run_private(logistic_problem, 2, b, make_rng(42), fallback=True)
    other = run_private(logistic_problem, 2, b, make_rng(43), fallback=True)
    assert one.release.status == "fallback"
    assert one.release == two.release and one.lambda_min == two.lambda_min
    assert other.release.value != one.release.value


def test_passing_test_gives_the_same_release_with_and_without_fallback(robust_problem):
    b = split_budget(6.0, 1e-6)
    for seed in range(4):
        with_fb = run_private(robust_problem, 0, b, make_rng(seed), fallback=True)
        without = run_private(robust_problem, 0, b, make_rng(seed))
        assert with_fb.test.passed and without.test.passed
        assert with_fb.release == without.release and with_fb.release.status == "released"


def test_plain_algorithm5_is_unchanged(logistic_problem, small_problem):
    b = split_budget(1.0, 1e-6)
    for problem in (logistic_problem, small_problem):
        run = run_private(problem, 0, b, make_rng(5))
        r = run.release
        assert not run.test.passed and r.status == "bottom" and r.branch is None
        assert r.value is None and r.interval is None and r.interval_note == BOTTOM_NOTE
        assert r.fallback_epsilon is r.fallback_lambda_reg is r.fallback_noise_scale is None
        # with fallback, the certificates and the test are drawn identically; only the release differs
        fb = run_private(problem, 0, b, make_rng(5), fallback=True)
        assert fb.lambda_min == run.lambda_min and fb.test == run.test
        assert replace(fb.release, status="bottom", value=None, interval=None, interval_note=BOTTOM_NOTE,
                       fallback_epsilon=None, fallback_delta=None, fallback_shares=None, fallback_probe=None,
                       fallback_lambda_reg=None,
                       fallback_noise_scale=None, fallback_curvature=None, fallback_interval=None,
                       population=None) == r


def test_documents_carry_the_branch(logistic_problem, robust_problem):
    b = split_budget(1.0, 1e-6)
    run = run_private(logistic_problem, 0, b, make_rng(1), fallback=True)
    doc = release_document(logistic_problem, 0, [run])
    rel = doc["release"]
    assert FALLBACK_KEYS <= set(rel) and rel["status"] == "fallback" and rel["branch"] == "objective_perturbation"
    assert rel["fallback_lambda_reg"] == run.release.fallback_lambda_reg
    assert rel["fallback_noise_scale"] == run.release.fallback_noise_scale
    assert rel["value"] == run.release.value and rel["interval_note"] == run.release.interval_note
    rep = private_report(run, "x0", b, "synthetic", logistic_problem.n, logistic_problem.d,
                         model=logistic_problem.model)
    assert FALLBACK_KEYS <= set(rep["release"]) and rep["release"]["branch"] == "objective_perturbation"
    assert rep["release"]["fallback_noise_scale"] == run.release.fallback_noise_scale
    assert {"u_theta", "omega", "z"}.isdisjoint(rep["release"])
    passed = run_private(robust_problem, 0, split_budget(6.0, 1e-6), make_rng(1), fallback=True)
    doc = release_document(robust_problem, 0, [passed])
    assert doc["release"]["branch"] == "algorithm5" and doc["release"]["fallback_lambda_reg"] is None
    assert doc["release"]["interval_note"] == ALGORITHM5_NOTE


def test_half_width_formula(logistic_problem):
    """The ridge coefficient's half-width t_d s/lam: t_1 is the normal quantile, and t_d (d > 1) is the quantile of
    (||Z|| + |Z_1|)/2, checked on a million draws (its Monte Carlo error at the 0.95 quantile is about 0.002); the
    certified lambda_hat_min no longer enters (it bounds the curvature at the fit, not between theta_hat and
    theta_lam)."""
    g = logistic_problem.geometry
    t = ridge_quantile(g.d, 0.95)
    assert fallback_half_width(1e-3, 0.01, 0.95, g) == pytest.approx(t * 0.01 / 1e-3)
    assert ridge_quantile(1, 0.9) == pytest.approx(normal_quantile(0.95), rel=1e-12)
    z = np.random.default_rng(5).standard_normal((1_000_000, 5))
    for d in (2, 5):
        draws = (np.linalg.norm(z[:, :d], axis=1) + np.abs(z[:, 0])) / 2
        assert ridge_quantile(d, 0.95) == pytest.approx(np.quantile(draws, 0.95), abs=0.01)
        assert normal_quantile(0.975) < ridge_quantile(d, 0.95) < math.sqrt(stats.chi2.ppf(0.95, d))


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["coordinate", "lowest_curvature"])
def test_fallback_interval_coverage(direction):
    """Each interval covers what its note says at (at least) its level: u^T theta(P_n) where the curvature was
    certified (first order), u^T theta_lam(P_n) otherwise. Fails a correct interval with probability about 1e-3.

    The lowest-curvature direction (H's bottom eigenvector) is where the curvature matters most.
    """
    data = synthetic(n=20_000, d=3, loss="logistic", seed=7)
    p = prepare(data.X, data.y, "logistic")
    u = 0 if direction == "coordinate" else np.linalg.eigh(p.fit.hessian)[1][:, 0]
    b, level, draws = split_budget(1.0, 1e-6), 0.9, 1000
    rng = make_rng(2024)
    runs = [run_private(p, u, b, rng, level=level, fallback=True) for _ in range(draws)]
    assert all(r.release.status == "fallback" for r in runs)
    uv = runs[0].u
    lam = runs[0].release.fallback_lambda_reg
    certified = np.array([r.release.fallback_curvature.bound is not None for r in runs])
    assert certified.mean() > 0.9
    theta_lam = float(uv @ regularised_fit_theta(p, lam))  # u^T theta_lam(P_n), no linear term
    target = np.where(certified, float(uv @ p.fit.theta), theta_lam)
    lo, hi = np.array([r.release.interval for r in runs]).T
    coverage = float(np.mean((lo <= target) & (target <= hi)))
    se = math.sqrt(level * (1 - level) / draws)
    assert coverage >= level - 3 * se, (coverage, level)


@pytest.mark.slow
def test_the_command_line_falls_back_by_default_for_logistic_data_and_says_which_branch():
    import json
    import subprocess
    import sys
    from pathlib import Path

    pums = Path(__file__).resolve().parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
    args = [sys.executable, "-m", "core", "release", "--pums", str(pums), "--n", "150", "--sample-seed", "1",
            "--coordinate", "female", "--epsilon", "4", "--delta", "1e-6", "--seed", "2"]
    def run(*extra: str) -> dict:
        return json.loads(subprocess.run([*args, *extra], capture_output=True, text=True, timeout=120,
                                         check=True).stdout)

    plain, fell, bare = run("--fallback", "off"), run(), run("--fallback")  # auto (as the app) and a bare flag: on
    assert plain["release"]["status"] == "bottom" and plain["release"]["value"] is None
    assert fell["release"]["status"] == "fallback" and fell["release"]["branch"] == "objective_perturbation"
    assert bare["release"] == fell["release"]  # the same seed, the same branch
    low, high = fell["release"]["interval"]
    assert low < fell["release"]["value"] < high
    assert fell["budget"] == plain["budget"]  # the same total guarantee


def test_the_fallback_refuses_a_budget_solved_by_privacy_loss_distributions(robust_problem, tmp_path):
    """Its guarantee is proven under basic composition only: run_private and a release plan both refuse, the plan
    before anything is charged, naming the two controls."""
    from core.data.spec import SyntheticSpec
    from core.errors import BudgetError
    from core.estimator.model import ModelSpec
    from core.plan import ReleasePlan

    pld = make_budget(4.0, 1e-6, (1, 1, 18), "pld")
    with pytest.raises(BudgetError) as refused:
        run_private(robust_problem, 0, pld, make_rng(1), fallback=True)
    assert refused.value.setting == "accounting"
    assert "basic composition only" in refused.value.template
    assert "{accounting}" in refused.value.template and "{fallback}" in refused.value.template
    assert run_private(robust_problem, 0, pld, make_rng(1)).budget is pld  # plain Algorithm 5 keeps PLD
    with pytest.raises(BudgetError):
        ReleasePlan(data=SyntheticSpec("robust", 2000, 2, 1.0, 1.0, 0), model=ModelSpec("robust"), target=0,
                    name="x0", budget=pld, fallback=True)
