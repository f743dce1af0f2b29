"""The diagnosis of the test (14), and the what-if's search at large n with its continuous count."""

import math

import numpy as np
import pytest

from core.data import synthetic
from core.data.acs import read_pums
from core.mechanisms.certificates import steps_to_invert
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.recursion import up_recursion
from core.mechanisms.stability import stability_test
from core.privacy.accounting import make_budget
from core.teaching.diagnosis import diagnose, from_fit
from core.teaching.whatif import down_count, noise_free_test, pass_probability, smallest_epsilon, smallest_n

SPLIT = (1.0, 1.0, 1.0)
CENSUS = "tests/data/SYNTHETIC_psam_p06_CA_2018_1-Year.csv"


@pytest.fixture(scope="module")
def census_problem():
    """Logistic ACS income, d = 17, every row of the fixture: kappa in the hundreds."""
    ds = read_pums(CENSUS)
    p = prepare(ds.X, ds.y, "logistic", "cube", feature_names=ds.feature_names)
    assert p.d == 17 and 100 < p.fit.lambda_max / p.fit.lambda_min < 1000
    return p


@pytest.fixture(scope="module")
def stretched_problem():
    """Synthetic logistic, d = 17, one column shrunk so that kappa is in the hundreds."""
    data = synthetic(5_000, 17, "logistic", theta_norm=1.0, seed=3)
    X = data.X.copy()
    X[:, 0] *= 0.05
    p = prepare(X, data.y, "logistic", "cube")
    assert 100 < p.fit.lambda_max / p.fit.lambda_min < 1000
    return p


def recompute(dg):
    num = 1.0 + sum(t.value for t in dg.side_terms("A numerator"))
    den = 1.0
    for t in dg.side_terms("A denominator"):
        den = den - t.value
    b = 1.0
    for t in dg.side_terms("B"):
        b = b + t.value
    A, B = num / den * dg.stretch, b * dg.stretch
    return A, B, max(A, B) ** 2 - 1.0


@pytest.mark.parametrize("domain", ["cube", "ball"])
def test_terms_recompute_the_test_exactly(domain):
    data = synthetic(20_000, 3, "robust", theta_norm=1.0, seed=11)
    p = prepare(data.X, data.y, "robust", domain, radius=None if domain == "cube" else 2.0)
    seen = set()
    for eps in (0.5, 1.0, 10.0, 40.0):
        run = run_private(p, 0, make_budget(eps, 1e-6, SPLIT), make_rng(5))
        dg = diagnose(run.test, p.geometry, p.n)
        assert dg.private and dg.passed == run.test.passed
        A, B, value = recompute(dg)
        assert (A, B, value) == (run.test.A, run.test.B, run.test.value)
        assert (dg.A, dg.B, dg.value) == (run.test.A, run.test.B, run.test.value)
        assert (value <= dg.threshold) == run.test.passed
        seen.add(run.test.passed)
        expected = {"cube": 3 + 3, "ball": 2 + 2}[domain]
        assert len(dg.terms) == expected
        # the binding side is the larger one, and its term the largest there
        assert dg.binding_side == ("A" if A >= B else "B")
        pool = [t.value for t in dg.terms if t.side == dg.binding_side] + [dg.stretch - 1.0]
        assert dg.binding.value == max(pool)
        assert "κ̂" in dg.summary and "n = 20,000" in dg.summary
        assert (dg.n_factor == 1.0) == run.test.passed
    assert seen == {True, False}  # a passing and a failing test


def test_large_kappa_names_the_denominator_and_the_sample(census_problem):
    n = 10**6
    dg = from_fit(census_problem, 1.0, 1e-6, SPLIT, n)
    assert not dg.private and not dg.passed
    assert "condition number λ̂max/λ̂min is too large for this n" in dg.reason
    assert dg.den_a <= 0 and dg.binding_side == "A" and dg.binding.place == "A denominator"
    assert dg.binding.value == max(t.value for t in dg.side_terms("A denominator"))
    assert f"κ̂ = {dg.kappa:.3g} is too large for n = 10⁶" in dg.summary
    assert 1.0 - dg.terms[1].value - dg.terms[2].value == dg.den_a  # the denominator recomputed


def test_zero_certificate_and_other_failures_say_what_is_wrong(census_problem):
    dg = from_fit(census_problem, 1.0, 1e-6, SPLIT)  # n = 198: nothing certified
    assert dg.terms == () and dg.binding is None
    assert "no curvature could be certified" in dg.reason and "n = 198" in dg.summary
    g = census_problem.geometry
    t = stability_test(1e-9, 0.2, g, 1000, 0.0, 1.0, 1e-6)
    assert "(C1)" in t.reason and "too small for this n" in t.reason


def test_whatif_reaches_ten_to_the_ten_quickly(census_problem, stretched_problem):
    for p in (census_problem, stretched_problem):
        n = smallest_n(p, 1.0, 1e-6, SPLIT)  # its speed: benchmarks/bench_core.py, target 4
        assert n is not None and 10**8 < n <= 10**12, n
        assert noise_free_test(p, 1.0, 1e-6, SPLIT, n).passed
        assert not noise_free_test(p, 1.0, 1e-6, SPLIT, int(n / 1.03)).passed
        dg = from_fit(p, 1.0, 1e-6, SPLIT, n)
        assert dg.passed


def test_continuous_count_agrees_with_the_exact_search(census_problem):
    """At a scale where iterating is feasible, the search with the continuous count gives the exact answer."""
    exact = smallest_n(census_problem, 20.0, 1e-6, SPLIT, exact_steps=10**9)
    approx = smallest_n(census_problem, 20.0, 1e-6, SPLIT, exact_steps=0)
    assert exact is not None and 10**8 < exact < 10**9
    assert approx == exact
    # and the continuous answer is a boundary of the exact test
    assert noise_free_test(census_problem, 20.0, 1e-6, SPLIT, approx, exact_steps=10**9).passed
    assert not noise_free_test(census_problem, 20.0, 1e-6, SPLIT, int(approx / 1.03), exact_steps=10**9).passed


@pytest.mark.parametrize("lam_reg", [0.0, 1e-3])
def test_continuous_count_within_its_stated_error(census_problem, robust_problem, lam_reg):
    """|N - N~| <= 2 + TV(ln s) (module core.teaching.whatif); measured within 1.3 steps on a grid of n and lambda."""
    worst = 0.0
    for base, ns in ((census_problem, (10**7, 10**8, 10**9)), (robust_problem, (10**5, 10**6))):
        p = base if lam_reg == 0 else prepare(base.X, base.y, base.model.loss, "cube", lam_reg=lam_reg)
        for n in ns:
            dc = down_count(p, n, exact_steps=0)
            for lam in (p.fit.lambda_min, 2.0 * p.fit.lambda_min, 0.5 * (p.fit.lambda_min + p.fit.lambda_max)):
                if lam <= dc.anchor[0] or dc.approx_count(lam) > 500_000:  # keep the exact iteration quick
                    continue
                exact = dc.rec.count(lam)
                err = abs(exact - dc.approx_count(lam))
                assert err <= dc.error_bound(lam), (n, lam, err)
                worst = max(worst, err)
                # the inverse: N~(inverse(m)) = m, and the exact count there is within the same error
                m = int(exact) - 40
                lam_m = dc.inverse(m)
                assert abs(dc.approx_count(lam_m) - m) < 1e-5
                assert abs(dc.rec.count(lam_m) - m) <= 2
    assert worst <= 1.5, worst


def test_pass_probability_is_a_laplace_sum(robust_problem):
    """Against a simulation of the certificates' noise, and the 95% point above the 50/50 point."""
    eps = 1.0
    n50 = smallest_n(robust_problem, eps, 1e-6, SPLIT)
    n = n50
    p = pass_probability(robust_problem, eps, 1e-6, SPLIT, n)
    f, g = robust_problem.fit, robust_problem.geometry
    b = make_budget(eps, 1e-6, SPLIT)
    dc = down_count(robust_problem, n)
    rng = np.random.default_rng(0)
    Na, hits, draws = dc.count(f.lambda_min), 0, 400
    for _ in range(draws):
        lmin = dc.inverse(steps_to_invert(Na + rng.laplace(0, 1 / b.lambda_min.epsilon), b.lambda_min.epsilon,
                                          b.lambda_min.delta)[1])
        lmax = None
        if lmin > 0:
            up = up_recursion(lmin, g, n, f.lam_reg)
            lmax = up.inverse(steps_to_invert(up.count(f.lambda_max) + rng.laplace(0, 1 / b.lambda_max.epsilon),
                                              b.lambda_max.epsilon, b.lambda_max.delta)[1])
        hits += stability_test(lmin, lmax, g, n, f.lam_reg, b.release.epsilon, b.release.delta).passed
    assert 0.0 < p < 1.0
    assert abs(hits / draws - p) < 4 * math.sqrt(p * (1 - p) / draws) + 0.01
    n95 = smallest_n(robust_problem, eps, 1e-6, SPLIT, level=0.95)
    assert n95 >= n50
    assert pass_probability(robust_problem, eps, 1e-6, SPLIT, n95) >= 0.95
    e50 = smallest_epsilon(robust_problem, 1e-6, SPLIT)
    e95 = smallest_epsilon(robust_problem, 1e-6, SPLIT, level=0.95)
    assert e95 >= e50
    assert pass_probability(robust_problem, e95, 1e-6, SPLIT) >= 0.95


def test_bottom_advice_names_the_controls_and_the_scale_of_y_for_the_robust_loss():
    from core.teaching.diagnosis import bottom_advice

    robust, logistic = bottom_advice("robust"), bottom_advice("logistic")
    for text in (robust, logistic):
        assert "“When the stability test (14) fails” → on" in text and "Planner" in text and "ε" in text
    assert "if y is in large units" in robust and "if y is" not in logistic
