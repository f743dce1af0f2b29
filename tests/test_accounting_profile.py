"""The privacy profile δ(ε) of a budget (core.privacy.accounting.privacy_profile): basic composition and PLD."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import common, privacy_loss_distribution

from core.errors import BudgetError
from core.privacy.accounting import (
    PLD_GRID,
    PROFILE_PESSIMISM,
    basic_profile,
    generic_profile,
    make_budget,
    pld_profile,
    privacy_profile,
    profile_grid,
    release_event_delta,
)

BUDGETS = [  # (ε, δ, split, accounting): the defaults, uneven splits, a tiny and a large ε
    (4.0, 1e-6, (1.0, 1.0, 1.0), "basic"),
    (4.0, 1e-6, (1.0, 1.0, 1.0), "pld"),
    (1.0, 1e-5, (1.0, 2.0, 5.0), "basic"),
    (0.3, 1e-8, (2.0, 1.0, 1.0), "pld"),
    (10.0, 1e-6, (1.0, 1.0, 3.0), "basic"),
]


@pytest.fixture(scope="module", params=BUDGETS, ids=lambda p: f"{p[3]}-eps{p[0]}-split{p[2]}")
def case(request):
    eps, delta, split, accounting = request.param
    b = make_budget(eps, delta, split, accounting)
    return b, privacy_profile(b)


def arrays(p):
    return (np.asarray(p.epsilon), np.asarray(p.delta_basic), np.asarray(p.delta_accountant),
            np.asarray(p.delta_pld))


def test_the_grid_holds_the_chosen_epsilon_and_the_corners(case):
    b, p = case
    eps = np.asarray(p.epsilon)
    assert eps[0] == 0 and np.all(np.diff(eps) > 0)
    for corner in (b.epsilon_total, b.epsilon_basic, b.lambda_min.epsilon + b.lambda_max.epsilon):
        assert corner in p.epsilon
    assert eps[-1] == pytest.approx(1.5 * max(b.epsilon_total, b.epsilon_basic))
    assert (p.epsilon_chosen, p.delta_chosen) == (b.epsilon_total, b.delta_total)


def test_basic_profile_meets_the_basic_total_and_its_formula(case):
    b, p = case
    eps, basic, _, _ = arrays(p)
    laplace = b.lambda_min.epsilon + b.lambda_max.epsilon
    # At ε_basic, Lemma 2.5's δ exactly (the release's generic profile is δ_r from 2ε_c on).
    assert basic[list(p.epsilon).index(b.epsilon_basic)] == pytest.approx(b.delta_basic, rel=1e-12)
    assert np.all(basic[eps < laplace] == 1.0)  # pure-ε Laplace stages: no statement below ε_a + ε_b
    # The formula written out with exp instead of expm1, at every point of the grid above ε_a + ε_b.
    e0, d0 = 2 * b.release.epsilon, release_event_delta(b.release)
    x = eps[eps >= laplace] - laplace
    release = np.where(x < e0, d0 + (1 - d0) * (math.exp(e0) - np.exp(x)) / (1 + math.exp(e0)), d0)
    certificates = math.exp(laplace) * (b.lambda_min.delta + b.lambda_max.delta)
    np.testing.assert_allclose(basic[eps >= laplace], np.minimum(certificates + release, 1.0), rtol=1e-9)


def test_pld_profile_at_the_chosen_epsilon_is_within_the_budget(case):
    b, p = case
    at = list(p.epsilon).index(b.epsilon_total)
    if b.accounting == "pld":  # the split bisected on the accountant's ε: its δ there is within the total
        assert p.delta_accountant[at] <= b.delta_total
    # For either split, up to the discretisation's stated pessimism (docs/privacy.md: about 2e-4 in ε).
    assert pld_profile(b, np.array([b.epsilon_total + PROFILE_PESSIMISM]))[0] <= b.delta_total
    assert p.delta_pld[at] <= b.delta_total  # the guarantee: the smaller of the two bounds


def test_profiles_are_non_increasing(case):
    _, p = case
    for delta in arrays(p)[1:]:
        assert np.all(np.diff(delta) <= 0)
        assert np.all((delta > 0) & (delta <= 1))


def test_the_running_minimum_only_smooths_rounding(case):
    b, p = case
    raw = pld_profile(b, np.asarray(p.epsilon))
    smooth = np.asarray(p.delta_accountant)
    assert np.all(smooth <= raw)
    np.testing.assert_allclose(smooth, raw, rtol=1e-8)


def test_basic_is_above_pld_everywhere(case):
    b, p = case
    eps, basic, accountant, pld = arrays(p)
    assert np.all(basic >= pld)
    # Not only through the minimum: the accountant's bound, read at the grid's pessimism to the right, is below
    # basic composition at every ε of the grid (composition with pure-ε stages can only lower δ).
    assert np.all(pld_profile(b, eps + PROFILE_PESSIMISM) <= basic)
    # And it is far below where it matters: above ε_basic basic composition pays e^(ε_a+ε_b) on the certificates.
    above = eps >= b.epsilon_basic + PROFILE_PESSIMISM
    certificates = b.lambda_min.delta + b.lambda_max.delta
    assert np.all(accountant[above] <= certificates * math.exp(b.lambda_min.epsilon + b.lambda_max.epsilon)
                  + release_event_delta(b.release))


def test_pld_profile_is_above_each_stage_alone(case):
    """Composition only adds privacy loss, and the pessimistic estimate only rounds up: the accountant's δ is at
    least the certificates' failure probability plus the exact δ of either Laplace count or of the release alone."""
    b, p = case
    eps, _, accountant, _ = arrays(p)
    base = b.lambda_min.delta + b.lambda_max.delta
    release = generic_profile(eps, 2 * b.release.epsilon, release_event_delta(b.release))
    assert np.all(accountant >= (base + release) * (1 - 1e-9))
    for e0 in (b.lambda_min.epsilon, b.lambda_max.epsilon):
        laplace = np.where(eps < e0, -np.expm1((eps - e0) / 2), 0.0)  # Laplace mechanism: 1 − e^{(ε − ε0)/2}
        assert np.all(accountant >= (base + laplace) * (1 - 1e-9))


@pytest.mark.parametrize("eps0, delta0", [(0.5, 1e-6), (2.0, 1e-3), (8.0, 1e-9)])
def test_generic_profile_is_the_pair_dp_accounting_builds(eps0, delta0):
    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(eps0, delta0), value_discretization_interval=PLD_GRID)
    eps = np.linspace(0.0, 1.5 * eps0, 61)
    ours = generic_profile(eps, eps0, delta0)
    assert ours[0] == pytest.approx(delta0 + (1 - delta0) * math.tanh(eps0 / 2))  # total variation at ε = 0
    assert np.all(ours[eps >= eps0] == delta0)
    theirs = np.asarray(pld.get_delta_for_epsilon(eps))
    np.testing.assert_allclose(theirs, ours, rtol=1e-6, atol=1e-12)


def test_profile_grid_size_and_a_custom_grid():
    b = make_budget(2.0, 1e-6)
    assert profile_grid(b, 11).size <= 14
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    p = privacy_profile(b, grid)
    assert p.epsilon == (0.0, 1.0, 2.0, 3.0)
    np.testing.assert_array_equal(p.delta_basic, basic_profile(b, grid))


@pytest.mark.parametrize("grid", [np.array([1.0, 0.5]), np.array([-0.1, 1.0]), np.array([0.0, math.inf]),
                                  np.array([]), np.zeros((2, 2))])
def test_a_bad_grid_is_refused(grid):
    with pytest.raises(BudgetError, match="eps grid"):
        privacy_profile(make_budget(2.0, 1e-6), grid)
