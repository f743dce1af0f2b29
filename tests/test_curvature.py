"""Private curvature at a released point (core.mechanisms.curvature): its sensitivities by brute force, its failure
rates, an attacker's audit of the pair of steps, and the coverage of the fallback interval it gives.

Error rates: each statistical assertion below states its own; the audit fails a correct mechanism with probability
at most audit.ALPHA = 1e-3.
"""

import itertools
import math
from dataclasses import replace

import audit as A
import mpmath
import numpy as np
import pytest
from scipy import stats

from core.data import synthetic
from core.mechanisms.curvature import (
    LOG_SHARE,
    SPREAD_X,
    curvature,
    curvature_interval,
    curvature_intervals,
    curvature_probe,
    curvatures,
    hessian_at,
    log_noise,
    probe_scale,
    spread_miss,
    spread_quantile,
)
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.split import unspent_budget
from core.privacy.accounting import make_budget
from core.privacy.gaussian import DEFAULT_CALIBRATION, normal_quantile, sigma


def _sample(n, d, seed, loss="logistic"):
    data = synthetic(n, d, loss, seed=seed)
    return prepare(data.X, data.y, loss)


def _log_norm(H, u):
    return math.log(np.linalg.norm(np.linalg.solve(H, u)))


@pytest.mark.parametrize("loss", ["logistic", "robust"])
def test_one_row_moves_the_statistics_by_at_most_their_sensitivities(loss):
    """Brute force over replaced rows, chosen where they move the Hessian most (corners of the cube, and the bottom
    eigenvector scaled to the boundary, at the margin where h'' is largest): lambda_min moves by at most g = G1/n,
    and ln ||A^{-1} u|| by at most ln(1 + g/m), m the smaller lambda_min of the two, which is at most
    -ln(1 - g/lambda_hat) for any lambda_hat <= lambda_min(A) (step 2's sensitivity before rounding)."""
    rng = np.random.default_rng(11)
    p = _sample(60, 3, 5, loss)
    g, n = p.geometry, p.n
    point = p.fit.theta + 0.05 * rng.standard_normal(p.d)
    ridge, step = 1e-3, g.G1 / n
    u = np.array([1.0, 0.0, 0.0])
    H = hessian_at(p, point, ridge)
    worst_lambda = worst_log = 0.0
    for i in range(n):
        vecs = np.linalg.eigh(H)[1]
        rows = [np.sign(v) for v in vecs.T] + [np.sign(rng.standard_normal(p.d)) for _ in range(4)]
        for x in rows:
            X2, y2 = p.X.copy(), p.y.copy()
            X2[i] = x
            if loss == "robust":
                y2[i] = float(x @ point)  # residual 0: h'' at its largest
            q = prepare(X2, y2, loss)
            H2 = hessian_at(q, point, ridge)
            low, low2 = np.linalg.eigvalsh(H)[0], np.linalg.eigvalsh(H2)[0]
            d_lambda = abs(low - low2)
            d_log = abs(_log_norm(H, u) - _log_norm(H2, u))
            bound = math.log1p(step / min(low, low2))
            assert d_lambda <= step * (1 + 1e-9), (i, d_lambda, step)
            assert d_log <= bound * (1 + 1e-9), (i, d_log, bound)
            assert step < low and bound <= -math.log1p(-step / low) * (1 + 1e-12)
            worst_lambda, worst_log = max(worst_lambda, d_lambda / step), max(worst_log, d_log / bound)
        if i >= 15:
            break
    assert worst_lambda > 0.3 and worst_log > 0.05  # the bounds are approached, not vacuous


@pytest.mark.parametrize("loss", ["logistic", "robust"])
def test_one_row_moves_the_probe_by_at_most_g(loss):
    """Brute force over replaced rows (the corners of the cube along each eigenvector of the ceiling C = h''_sup P_n x
    x^T, and random corners; removing a row's weight along the bottom eigenvector moves lambda_min(C) most): lambda_min
    moves by at most g = G1/n; every Hessian lies below C (the probe reads a ceiling); the reading's Laplace scale is
    (g + 2e)/epsilon."""
    rng = np.random.default_rng(12)
    p = _sample(60, 3, 5, loss)
    g, n = p.geometry, p.n
    step = g.G1 / n
    probe = curvature_probe(p, 0.5, make_rng(1))
    C = g.h2_sup * p.X.T @ p.X / n
    assert probe.mu == pytest.approx(np.linalg.eigvalsh(C)[0], rel=1e-12)
    assert probe.scale == pytest.approx(probe_scale(p, 0.5)) and probe.scale > step / 0.5
    assert np.linalg.eigvalsh(C - hessian_at(p, p.fit.theta, 0.0))[0] >= -1e-12  # H(theta) <= C
    worst = 0.0
    for i in range(min(n, 20)):
        rows = [np.sign(v) for v in np.linalg.eigh(C)[1].T] + [np.sign(rng.standard_normal(p.d)) for _ in range(4)]
        for x in rows:
            X2 = p.X.copy()
            X2[i] = x
            moved = abs(curvature_probe(prepare(X2, p.y, loss), 0.5, make_rng(1)).mu - probe.mu)
            assert moved <= step * (1 + 1e-9), (i, moved, step)
            worst = max(worst, moved / step)
    assert worst > 0.3  # the bound is approached, not vacuous


def test_a_probe_read_back_draws_no_noise():
    p = _sample(400, 3, 2, "robust")
    drawn = curvature_probe(p, 0.2, make_rng(3))
    again = curvature_probe(p, 0.2, make_rng(99), drawn.reading)
    assert again == drawn and drawn.reading != drawn.mu


@pytest.mark.audit
def test_audit_of_the_probe():
    """An attacker's audit of the probe's reading on neighbours one row apart, the row replaced along the ceiling's
    bottom eigenvector (where lambda_min(C) moves most): eps_lb <= epsilon (pure, delta = 0; probability of a false
    failure <= 1e-3), and the pair is a real test."""
    base = A.robust_sample(400, 2, 20261128)
    P = A.prepare_sample(base)
    C = P.geometry.h2_sup * P.X.T @ P.X / P.n
    weakest = np.linalg.eigh(C)[1][:, 0]
    i = int(np.argmax(np.abs(P.X @ weakest)))  # the row with most weight along it, replaced by its orthogonal corner
    Q = A.prepare_sample(A.replace_row(base, i, x=np.sign(np.linalg.eigh(C)[1][:, 1])))
    eps, draws = 1.0, 40_000

    def sample(problem, seed):
        rng = make_rng(seed)
        return {"reading": np.array([curvature_probe(problem, eps, rng).reading for _ in range(draws)])}

    moved = abs(curvature_probe(P, eps, make_rng(0)).mu - curvature_probe(Q, eps, make_rng(0)).mu)
    assert moved > 0.3 * P.geometry.G1 / P.n
    result = A.audit(sample(P, 1), sample(Q, 2), ("reading",), eps, 1e-9)
    assert result.eps_lb <= eps, result
    assert result.eps_lb > 0.1 * eps, result


@pytest.mark.slow
def test_lambda_hat_fails_at_most_delta_and_the_bound_at_most_beta():
    """With delta_1 = 0.05 and beta = 0.1, over 4,000 draws: lambda_hat > mu at a rate within 3 standard errors of
    at most 0.05 (the Laplace tail is exact there), and U < ||A^{-1} u|| at a rate at most 0.1 + 3 se. Each check
    fails a correct mechanism with probability about 1e-3."""
    p = _sample(20_000, 3, 3)
    u = np.array([0.0, 1.0, 0.0])
    rng = make_rng(7)
    draws, delta, beta = 4_000, 0.05, 0.1
    out = [curvature(p, p.fit.theta, 1e-4, u, 2.0, delta, beta, rng) for _ in range(draws)]
    mu, norm = out[0].mu, out[0].norm
    over = np.mean([c.lambda_hat > mu for c in out])
    assert over <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)
    assert over >= delta / 2  # the tail is used, not wasted
    bounds = [c.bound for c in out if c.bound is not None]
    assert len(bounds) > 0.9 * draws
    under = np.mean([b < norm for b in bounds])
    assert under <= beta + 3 * math.sqrt(beta * (1 - beta) / len(bounds))
    # Step 2 gets LOG_SHARE of epsilon: its Laplace scale is the sensitivity over that share.
    c = next(c for c in out if c.bound is not None)
    assert c.scale_2 == pytest.approx(-math.log1p(-p.geometry.G1 / p.n / c.lambda_hat) / (LOG_SHARE * 2.0), rel=1e-6)


def test_step_two_runs_only_when_its_sensitivity_is_small():
    """Too few rows for this epsilon: lambda_hat cannot clear g, step 2 does not run, and there is no curvature
    interval."""
    p = _sample(300, 3, 4)
    c = curvature(p, p.fit.theta, 1e-4, np.eye(3)[0], 0.05, 1e-7, 0.01, make_rng(1))
    assert c.bound is None and "too little curvature" in c.reason
    assert c.lambda_hat <= p.geometry.G1 / p.n
    assert curvature_interval(p, p.fit.theta, c, 1e-3, 1e-4, 0.95) is None


def _curvature_pair(n=400, seed=20250311):
    """P and P' one row apart, the row chosen along P's bottom eigenvector at the released point (where it moves
    both lambda_min and the norm most)."""
    base = A.robust_sample(n, 2, seed)
    P = A.prepare_sample(base)
    vec = np.linalg.eigh(P.fit.hessian)[1][:, 0]
    x = np.sign(vec)
    P2 = A.prepare_sample(A.replace_row(base, 0, x=x, y=float(x @ P.fit.theta)))
    return P, P2


@pytest.mark.slow
@pytest.mark.parametrize("k,family,draws", [(1, "laplace", 20_000), (16, "gaussian", 8_000)])
def test_audit_of_the_curvature_pair(k, family, draws):
    """An attacker's audit of (lambda_hat, ln U) at the public point: eps_lb <= eps_1 + eps_2 at the set's delta
    (probability of a false failure <= 1e-3). The pair moves lambda_min by a good part of g. With 16 directions (a
    table's bounds) step 2 adds Gaussian noise to the vector of log-norms (core.mechanisms.curvature.log_noise); the
    audit reads lambda_hat and three of the bounds."""
    P, P2 = _curvature_pair()
    point = P.fit.theta
    angles = np.linspace(math.pi / 4, math.pi / 4 + math.pi, k, endpoint=False)
    directions = np.column_stack([np.cos(angles), np.sin(angles)])
    eps, delta, beta = 8.0, 1e-6, 0.01
    shown = range(min(k, 3))

    def sample(problem, seed):
        rng = make_rng(seed)
        sets = [curvatures(problem, point, 1e-3, directions, eps, delta, beta, rng) for _ in range(draws)]
        assert {c.family for cs in sets for c in cs} == {family}
        return {"lambda_hat": np.array([cs[0].lambda_hat for cs in sets]),
                **{f"log_bound_{j}": np.array([math.log(cs[j].bound) if cs[j].bound is not None else np.nan
                                               for cs in sets]) for j in shown}}

    sp, sq = sample(P, 1), sample(P2, 2)
    assert np.mean(np.isfinite(sp["log_bound_0"])) > 0.5  # step 2 ran: the audit covers it
    result = A.audit(sp, sq, ("lambda_hat", *(f"log_bound_{j}" for j in shown)), eps, delta)
    assert result.eps_lb <= eps, result
    assert result.eps_lb > 0.1 * eps  # the pair is a real test, not two identical data sets


def test_log_noise_takes_the_smaller_quantile():
    """One bound: Laplace, pure. Seventeen at a table's census shares: Gaussian, whose quantile is then the smaller,
    with half of delta left to step 1."""
    assert log_noise(1, 0.144, 3.6e-7, 0.01) == ("laplace", 1 / 0.144, 3.6e-7)
    family, unit, delta_1 = log_noise(17, 1.0, 3.6e-7, 5.9e-4)
    assert family == "gaussian" and delta_1 == 1.8e-7 and unit == sigma(1.0, 1.8e-7) * math.sqrt(17)
    assert unit * normal_quantile(1 - 5.9e-4) < 17 * math.log(1 / (2 * 5.9e-4))


def test_fallback_spends_all_that_is_unspent_and_shares_it_with_the_curvature():
    p = _sample(400, 3, 2, "robust")
    b = make_budget(4.0, 1e-6)
    run = run_private(p, 0, b, make_rng(3), fallback=True)
    r = run.release
    assert run.lambda_min.lambda_hat == 0 and r.status == "fallback"
    # lambda_hat_min = 0: the probe read the curvature on half of stage 2's epsilon, and the fallback has the rest
    assert r.fallback_probe is not None and r.fallback_probe.epsilon == pytest.approx(b.lambda_max.epsilon / 2)
    assert (r.fallback_epsilon, r.fallback_delta) == unspent_budget(b, 0.0, probed=True)
    assert r.fallback_epsilon == pytest.approx(b.lambda_max.epsilon / 2 + 2 * b.release.epsilon)
    c = r.fallback_curvature
    share, delta_share, _ = r.fallback_shares
    assert c.epsilon == pytest.approx(share * r.fallback_epsilon)
    assert c.delta == pytest.approx(delta_share * r.fallback_delta)


def test_curvature_interval_covers_the_fit_on_these_rows():
    """Logistic, n = 20,000, d = 3, eps = 1 (every draw falls back), level 0.9, 400 draws: the interval covers
    u^T theta(P_n) at least at level - 3 standard errors (a correct first-order interval fails this with
    probability about 1e-3), and it is narrower than the worst-case s / lam interval by a large factor."""
    p = _sample(20_000, 3, 7)
    b, level, draws = make_budget(1.0, 1e-6, (1, 1, 18)), 0.9, 400
    rng = make_rng(2026)
    runs = [run_private(p, 0, b, rng, DEFAULT_CALIBRATION, level, fallback=True).release for _ in range(draws)]
    assert all(r.status == "fallback" and r.fallback_curvature.bound is not None for r in runs)
    target = float(p.fit.theta[0])
    lo, hi = np.array([r.interval for r in runs]).T
    coverage = float(np.mean((lo <= target) & (target <= hi)))
    assert coverage >= level - 3 * math.sqrt(level * (1 - level) / draws), coverage
    half = np.median((hi - lo) / 2)
    worst = stats.norm.ppf(0.95) * runs[0].fallback_noise_scale / runs[0].fallback_lambda_reg
    assert half < worst / 100
    assert "proven" in runs[0].interval_note and "uᵀθ(Pₙ)" in runs[0].interval_note


def _exact_miss(kappa, scale, family, s, bias, top=math.inf):
    """P(s|Z| + bias > min(kappa e^L, top)) by mpmath's quadrature at 30 digits, L's mass beyond +-X a miss as in
    core."""
    mpmath.mp.dps = 30
    x_max = SPREAD_X[family]

    def f(x):
        t = min(kappa * mpmath.exp(scale * x), top) - bias
        miss = 1 if t <= 0 else (0 if t / s > 40 else mpmath.erfc(t / s / mpmath.sqrt(2)))
        return (0.5 * mpmath.exp(-abs(x)) if family == "laplace" else mpmath.npdf(x)) * miss

    cuts = {0.0, -x_max, x_max} | {math.log((bias + k * s) / kappa) / scale
                                   for k in (0, 0.001, 0.01, 0.1, 0.5, 1, 2, 3, 5, 8, 15) if bias + k * s > 0}
    if math.isfinite(top):
        cuts.add(math.log(top / kappa) / scale)
    tails = mpmath.exp(-x_max) if family == "laplace" else 2 * mpmath.ncdf(-x_max)
    return float(mpmath.quad(f, sorted(c for c in cuts if -x_max <= c <= x_max)) + tails)


def test_spread_miss_matches_thirty_digit_quadrature():
    """Over scales 1e-3 to 50 (both families), biases 0 to 5 s, kappa from a third of to twenty times s z + bias, with
    and without a cap: spread_miss is never below the exact value by more than 1e-12 relative (an under-count would
    narrow the interval) and above it by at most SPREAD_MARGIN = 1e-6 relative, which kappa's solve absorbs."""
    for scale, family, bias, factor, top in itertools.product((1e-3, 0.17, 2.0, 50.0), ("laplace", "gaussian"),
                                                              (0.0, 5.0), (0.3, 1.0, 20.0), (math.inf, 3.0)):
        kappa, top = factor * (2.0 + bias), top + bias
        got = spread_miss(kappa, scale, family, 1.0, bias, top)
        exact = _exact_miss(kappa, scale, family, 1.0, bias, top)
        assert exact * (1 - 1e-12) <= got <= exact * (1 + 1e-6) + 1e-300, (scale, family, bias, factor, got, exact)


def test_spread_quantile_is_the_joint_laws_quantile():
    """Without spread or cap it is s z_{1-a/2} + bias exactly; with them, 4,000,000 joint draws of (L, Z) miss the
    capped interval min(kappa e^L, top) at the rate it was solved for within 5 standard errors (a correct quantile
    fails this with probability < 1e-6); it grows with the spread and with the bias, and a cap that alone misses too
    often is refused."""
    s, bias, miss = 3e-4, 5e-4, 0.01
    assert spread_quantile(0.0, "laplace", s, bias, miss) == pytest.approx(s * normal_quantile(1 - miss / 2) + bias,
                                                                           rel=1e-5)
    top = s * normal_quantile(1 - 0.1 * miss / 2) + bias  # the cap alone misses a tenth of the rate
    rng = np.random.default_rng(11)
    x = s * np.abs(rng.standard_normal(4_000_000)) + bias
    for family, scale in (("laplace", 0.17), ("gaussian", 0.3), ("laplace", 1.5)):
        draw = rng.laplace(0.0, scale, x.size) if family == "laplace" else rng.normal(0.0, scale, x.size)
        kappa = spread_quantile(scale, family, s, bias, miss, top)
        rate = float(np.mean(x > np.minimum(kappa * np.exp(draw), top)))
        assert abs(rate - miss) <= 5 * math.sqrt(miss * (1 - miss) / x.size), (family, scale, rate)
        assert spread_quantile(2 * scale, family, s, bias, miss, top) > kappa > spread_quantile(scale, family, s, 0,
                                                                                               miss, top - bias)
    with pytest.raises(ValueError):
        spread_quantile(0.17, "laplace", s, bias, miss, s * normal_quantile(1 - miss / 2) + bias)
    # the lowest level (0.5) under a wide spread: kappa lies below s z + bias, and is found there
    low = spread_quantile(1.0, "laplace", 1.0, 0.0, 0.45)
    assert low < normal_quantile(1 - 0.45 / 2)
    assert spread_miss(low, 1.0, "laplace", 1.0, 0.0) == pytest.approx(0.45, rel=2e-6)
    assert spread_quantile(200.0, "laplace", 1.0, 0.0, 0.01, ceiling=50.0) == 50.0  # past it the cap binds


def test_curvature_interval_reads_the_noisy_log_norm_and_is_capped():
    """One set of bounds at a released point, each half-width recomputed here from docs/privacy.md's theorem: the main
    term min(kappa exp(l~ + e_l), q s/lambda_hat) at the level left once delta_1, ||b||'s tail (a/10) and U's (a/5)
    are taken out, kappa shared and solved without bias; the ridge bias U beta_lam; the remainder
    sqrt(U/lambda_hat) c_bar ((e^A - 1) + k(a_D) e^A); the slack. A huge log-norm meets the cap."""
    p = _sample(20_000, 3, 7)
    point = p.fit.theta + 0.01
    lam, s, level = 1e-4, 2e-3, 0.95
    cs = curvatures(p, point, p.fit.lam_reg, np.eye(3), 6.0, 1e-6, 0.01, make_rng(3))
    cis = curvature_intervals(p, point, cs, s, lam, level)
    theta, r = float(np.linalg.norm(point)), p.geometry.r
    assert cis[0].point_norm == theta and p.fit.lam_reg == 0 and r == math.sqrt(3)
    main = 1 - (0.05 * 0.7 - cs[0].delta)
    q = normal_quantile(1 - 0.1 * (1 - main) / 2)
    kappa = spread_quantile(cs[0].scale_2, cs[0].family, s, 0.0, 1 - main, q * s)
    slack = cis[0].slack
    beta = lam * (theta + slack)
    c_bar = s * math.sqrt(stats.chi2.ppf(1 - 0.005, 3)) + beta
    ratio = r * c_bar * math.exp(r * slack) / cs[0].lambda_hat
    a_d = -math.log(1 - ratio)
    reach = a_d + r * slack
    phi, psi = (1 - math.exp(-a_d)) / a_d, (math.exp(a_d) - 1) / a_d
    k = max((1 - phi) / phi, (psi - 1) / psi)
    for c, ci in zip(cs, cis, strict=True):
        first = min(kappa * math.exp(c.log_norm), q * s / c.lambda_hat)
        remainder = math.sqrt(c.bound / c.lambda_hat) * c_bar * (math.expm1(reach) + k * math.exp(reach))
        assert ci.half == pytest.approx(first + c.bound * beta + remainder + slack, rel=1e-9)
        assert ci.noise + ci.bias + ci.remainder + ci.slack == pytest.approx(ci.half, rel=1e-12) and ci.bias > 0
        assert ci.reach == pytest.approx(reach, rel=1e-12) and 0 < ratio < 1
        assert c.bound >= math.exp(c.log_norm)  # U adds the tail at beta to the same estimate
    huge = replace(cs[0], log_norm=50.0)
    cap = curvature_interval(p, point, huge, s, lam, level)
    assert cap.noise == pytest.approx(q * s / huge.lambda_hat, rel=1e-12)
    # a step-2 draw so far down that kappa exp(l~) would pass what a float holds: every row takes the cap
    tiny = curvature_intervals(p, point, (replace(cs[0], log_norm=-2000.0), cs[1]), s, lam, level)
    assert [t.noise for t in tiny] == pytest.approx([cap.noise] * 2, rel=1e-12)
    # noise whose norm the certified curvature cannot hold (q >= 1): no interval
    assert curvature_interval(p, point, cs[0], cs[0].lambda_hat / r, lam, level) is None


@pytest.mark.audit
def test_audit_of_the_default_release_with_its_fallback():
    """The app's default run (split (1, 1, 18), fallback on, curvature interval) on neighbours one outlier apart,
    where every draw falls back: the joint output (status, value, interval's half-width) has eps_lb <= the total
    (eps, delta) (probability of a false failure <= 1e-3)."""
    base = A.robust_sample(500, 2, 20250312)
    P = A.prepare_sample(base)
    Q = A.prepare_sample(A.replace_row(base, 3, x=np.array([1.0, -1.0]), y=40.0))
    budget, draws = make_budget(4.0, 1e-6, (1, 1, 18)), 20_000

    def sample(problem, seed):
        rng = make_rng(seed)
        runs = [run_private(problem, 0, budget, rng, DEFAULT_CALIBRATION, fallback=True).release for _ in range(draws)]
        assert all(r.status == "fallback" for r in runs)
        return {"value": np.array([r.value for r in runs]),
                "half": np.array([(r.interval[1] - r.interval[0]) / 2 for r in runs])}

    result = A.audit(sample(P, 1), sample(Q, 2), ("value", "half"), budget.epsilon_total, budget.delta_total)
    assert result.eps_lb <= budget.epsilon_total, result
