"""The fallback's split (core.mechanisms.split): one rule from a stand-in for the curvature, checked against the grid
it searches, at the extremes, and as the preview, the release and the Planner read it."""

from __future__ import annotations

import math

import pytest

from core.estimator.geometry import make_geometry
from core.estimator.losses import LOGISTIC
from core.mechanisms.curvature import CurvatureProbe
from core.mechanisms.full_vector import op_parameters
from core.mechanisms.split import (
    CERTIFY_AT,
    CURVATURE_SHARE,
    DELTA_SHARE,
    LAPLACE_POINTS,
    LOG_GRID,
    PROBE_RATIO,
    SHARE_GRID,
    STAND_IN_STEP,
    TABLE_SHARES,
    _width,
    certification_chance,
    choose_shares,
    fallback_budget_split,
    fallback_ridge,
    stand_in,
    unspent_budget,
)
from core.privacy.accounting import RELEASE_SPLIT, make_budget

G = make_geometry(LOGISTIC, "ball", 17, 2.35)  # the census encoding's ball
N = 50_000
STEP = G.G1 / N


def on_grid(mu: float) -> float:
    """The stand-in as the rule reads it: to STAND_IN_STEP in logarithms."""
    return math.exp(STAND_IN_STEP * round(math.log(mu) / STAND_IN_STEP))


def _grid(k: int, eps: float, dlt: float, level: float, mu: float) -> dict:
    """Every candidate of the rule's grid: (chance, width), computed as the rule's module docstring says."""
    out = {}
    for share in SHARE_GRID:
        curvature = (share * eps, DELTA_SHARE * dlt)
        lam, s = op_parameters(G, N, eps - curvature[0], dlt - curvature[1], "analytic", fallback_ridge("analytic"))
        for log_share in LOG_GRID:
            chance, need, centre, scale = certification_chance(G, N, mu, curvature, log_share, level, s, lam, k)
            width = _width(G, N, k, curvature, log_share, level, s, lam, mu, need,
                           [centre + scale * x for x in LAPLACE_POINTS])
            out[(share, DELTA_SHARE, log_share)] = (chance, width)
    return out


@pytest.mark.parametrize("k, level, mu_steps", [(1, 0.95, 300.0), (4, 1 - 0.05 / 4, 300.0), (4, 1 - 0.05 / 4, 1000.0)])
def test_the_rule_keeps_the_narrowest_split_that_likely_certifies(k, level, mu_steps):
    eps, dlt = 3.8, 9e-7
    chosen = choose_shares(G, N, k, eps, dlt, level, 0.0, "analytic", mu_steps * STEP)
    grid = _grid(k, eps, dlt, level, on_grid(mu_steps * STEP))
    likely = {split: w for split, (chance, w) in grid.items() if chance >= CERTIFY_AT}
    assert likely and chosen in likely
    assert likely[chosen] == min(likely.values())


def test_stand_ins_a_hair_apart_choose_alike():
    eps, dlt, level = 1.0, 9e-7, 1 - 0.05 / 4
    mu = on_grid(300 * STEP)
    assert choose_shares(G, N, 4, eps, dlt, level, 0.0, "analytic", mu * 1.005) == \
        choose_shares(G, N, 4, eps, dlt, level, 0.0, "analytic", mu / 1.005)


def test_more_curvature_needs_less_of_the_budget():
    """A flat loss needs a larger share for its curvature bound than a curved one: the split follows the data."""
    eps, dlt, level = 1.0, 9e-7, 1 - 0.05 / 4
    flat = choose_shares(G, N, 4, eps, dlt, level, 0.0, "analytic", 600 * STEP)
    curved = choose_shares(G, N, 4, eps, dlt, level, 0.0, "analytic", 2000 * STEP)
    assert flat[0] > curved[0]


def test_without_a_word_on_the_curvature_the_fixed_shares_apply():
    eps, dlt = 2.0, 9e-7
    assert choose_shares(G, N, 1, eps, dlt, 0.95, 0.0, "analytic", None) == CURVATURE_SHARE
    assert choose_shares(G, N, 4, eps, dlt, 0.95, 0.0, "analytic", None) == TABLE_SHARES
    # a stand-in of 0 gives no split any chance: it says nothing the fixed shares do not
    assert choose_shares(G, N, 1, eps, dlt, 0.95, 0.0, "analytic", 0.0) == CURVATURE_SHARE
    # a low one that no split certifies likely: the narrowest on average (mostly the ridge coefficient's interval)
    low = choose_shares(G, N, 4, eps, dlt, 0.95, 0.0, "analytic", 15 * STEP)
    grid = _grid(4, eps, dlt, 0.95, on_grid(15 * STEP))
    assert max(chance for chance, _ in grid.values()) < CERTIFY_AT
    assert grid[low][1] == min(width for _, width in grid.values())


def test_the_stand_in_prefers_the_certificate():
    probe = CurvatureProbe(reading=0.01, scale=0.002, epsilon=0.1, mu=0.011)
    assert stand_in(0.003, probe) == 0.003  # stage 1's certificate, where there is one
    assert stand_in(0.0, probe) == pytest.approx(PROBE_RATIO * 0.01)
    assert stand_in(0.0, CurvatureProbe(reading=-0.001, scale=0.002, epsilon=0.1, mu=0.0)) == 0.0
    assert stand_in(0.0, None) is None


def test_the_split_spends_exactly_the_unspent_budget():
    b = make_budget(2.0, 1e-6, RELEASE_SPLIT)
    split = fallback_budget_split(b, 0.0, 1, G, N, 0.0, 0.95, "analytic", True, 300 * STEP)
    eps, dlt = unspent_budget(b, 0.0, probed=True)
    assert eps == pytest.approx(b.lambda_max.epsilon / 2 + 2 * b.release.epsilon)
    assert (split.epsilon, split.delta) == (eps, dlt)
    assert split.op[0] + split.curvature[0] == pytest.approx(eps) and split.op[1] + split.curvature[1] == dlt
    assert split.curvature[0] == pytest.approx(split.shares[0] * eps) and split.ridge == 3.0
    lam, _ = split.op_parameters(G, N, "analytic")
    assert lam == pytest.approx(3.0 * G.G1 / (N * split.op[0]))
    paper = fallback_budget_split(b, 0.0, 1, G, N, 0.0, 0.95, "paper", True, 300 * STEP)
    assert paper.ridge == 4.0 and math.isclose(paper.op_parameters(G, N, "paper")[0],
                                               4.0 * G.G1 / (N * paper.op[0]))
