"""Properties of the recursions (section 6.1): R <= lam, monotone, accelerating (22), exact inverses."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from core.estimator.geometry import make_geometry
from core.estimator.losses import LOSSES
from core.mechanisms.recursion import (
    AffineIncreasingRecursion,
    down_recursion,
    recursion_down,
    recursion_smooth,
    smooth_recursion,
    up_recursion,
)

setups = st.tuples(
    st.sampled_from(sorted(LOSSES)),
    st.sampled_from(["cube", "ball"]),
    st.integers(1, 30),  # d
    st.integers(50, 10**8),  # n
    st.sampled_from([0.0, 1e-4, 1e-2]),  # lam_reg
)
lams = st.floats(0.0, 20.0, allow_nan=False)


def geometry(loss, domain, d):
    return make_geometry(LOSSES[loss], domain, d, 1.5 if domain == "ball" else None)


@settings(max_examples=400, deadline=None)
@given(setups, lams, lams)
def test_recursion_down_is_below_identity_monotone_and_accelerating(setup, a, b):
    loss, domain, d, n, lam_reg = setup
    g = geometry(loss, domain, d)
    lo, hi = min(a, b), max(a, b)
    R_lo, R_hi = recursion_down(lo, g, n, lam_reg), recursion_down(hi, g, n, lam_reg)
    assert 0.0 <= R_lo <= lo and 0.0 <= R_hi <= hi
    assert R_lo <= R_hi
    if R_lo > 0 and lam_reg == 0:  # (22), Lemma 6.2: the step does not grow with lam, up to rounding
        assert lo - R_lo >= (hi - R_hi) - 1e-12 * hi


def test_acceleration_fails_with_regularisation_but_monotonicity_holds():
    """(22) fails by a hair for lam_reg > 0; the count's privacy needs only monotonicity."""
    g = geometry("logistic", "cube", 1)
    step = [lam - recursion_down(lam, g, 349, 0.01) for lam in (1.0, 3.0)]
    assert step[1] > step[0]
    assert recursion_down(1.0, g, 349, 0.01) < recursion_down(3.0, g, 349, 0.01)


@settings(max_examples=300, deadline=None)
@given(setups, lams, lams)
def test_recursion_smooth_is_below_identity_and_monotone(setup, a, b):
    loss, domain, d, n, lam_reg = setup
    g = geometry(loss, domain, d)
    lo, hi = lam_reg + min(a, b), lam_reg + max(a, b)
    R_lo, R_hi = recursion_smooth(lo, g, n, lam_reg), recursion_smooth(hi, g, n, lam_reg)
    assert lam_reg <= R_lo <= lo and R_lo <= R_hi <= hi
    if R_lo > lam_reg:
        assert lo - R_lo >= (hi - R_hi) - 1e-12 * hi


@settings(max_examples=150, deadline=None)
@given(setups, st.integers(1, 3000))
def test_inverse_is_the_boundary_point(setup, m):
    loss, domain, d, n, lam_reg = setup
    rec = down_recursion(geometry(loss, domain, d), n, lam_reg)
    lam_hat = rec.inverse(m)
    assert lam_hat > 0
    assert rec.power(lam_hat, m) <= rec.floor  # the count's floor zeta (core.estimator.rounding.count_floor)
    assert rec.power(lam_hat * (1 + 1e-9), m) > rec.floor
    # and the count agrees: m steps reach 0 from lam_hat, one more is needed just above it
    assert rec.count(lam_hat) <= m < rec.count(lam_hat * (1 + 1e-9))


@settings(max_examples=80, deadline=None)
@given(setups, st.integers(1, 500))
def test_smooth_inverse_is_the_boundary_point(setup, m):
    loss, domain, d, n, lam_reg = setup
    rec = smooth_recursion(geometry(loss, domain, d), n, lam_reg)
    lam_hat = rec.inverse(m)
    assert rec.power(lam_hat, m) <= lam_reg
    assert rec.power(lam_hat * (1 + 1e-9), m) > lam_reg


@settings(max_examples=300, deadline=None)
@given(
    st.floats(1e-8, 0.5), st.floats(1e-12, 1e-2), st.floats(0.5, 50.0), st.floats(0.0, 60.0), st.integers(0, 20000)
)
def test_affine_recursion_count_and_inverse_match_iteration(growth, b, cap, lam, m):
    rec = AffineIncreasingRecursion(growth=growth, b=b, cap=cap)
    lam = min(lam, cap * 1.2)
    N = rec.count(lam)
    assert rec.power(lam, N) >= cap
    assert N == 0 or rec.power(lam, N - 1) < cap
    top = rec.inverse(m)
    assert 0.0 <= top <= cap
    if m > 0 and top < cap:
        assert rec.power(top, m) >= cap
        # Tight: a hair lower misses the cap, wherever that hair is resolvable in R^m(lam) = a^m (lam + c) - c.
        if top > 0 and (1 + growth) ** m * top * 1e-9 > 64 * math.ulp(b / growth + cap):
            assert rec.power(top * (1 - 1e-9), m) < cap


def test_affine_power_matches_brute_force_iteration():
    rec = up_recursion(0.1, geometry("logistic", "cube", 5), 10_000, 0.0)
    x = 0.01
    for k in range(1, 3000):
        x = rec.step(x)
        assert math.isclose(rec.power(0.01, k), x, rel_tol=1e-10)
    assert rec.count(0.01) == next(k for k in range(1, 10**6) if rec.power(0.01, k) >= rec.cap)


def test_count_is_the_first_zero_of_the_iterates():
    rec = down_recursion(geometry("robust", "cube", 5), 100_000, 0.0)
    lam, k = 0.12, 0
    x = lam
    while x > 0:
        x, k = rec.step(x), k + 1
    assert rec.count(lam) == k
    assert rec.count(0.0) == 1  # (C1) fails: N = 1
