"""Empirical privacy audit: the mechanism, sampled as an attacker would, on chosen neighbouring pairs.

The auditor (`tests/audit.py`) runs the real pipeline many times on P and on P', picks events on
one half of the draws and bounds epsilon from below on the other half with Clopper-Pearson
intervals: eps_lb = ln((p_lo(P) - delta) / p_hi(P')), both orders, complements included.

Error rates.
- Every assertion `eps_lb <= claim` fails with probability at most ALPHA = 1e-3 when the mechanism
  meets its claim (Bonferroni over the KEEP = 4 events tested, each Clopper-Pearson bound at
  1.25e-4). This file makes 29 such assertions, so with fresh noise a correct mechanism would fail
  one of them with probability at most 2.9e-2; the noise seeds are fixed (derived from the data),
  so a run is repeatable and a failure is not a fluke of this run's noise alone.
- The separable pair's outcome check allows at most binom.ppf(1 - 1e-3, DRAWS, delta_a) releases
  on each side (a release needs stage 1's failure event, probability <= delta_a per draw).
- The power check of the tightest pair (eps_lb >= eps_a / 2) practically never fails on a correct
  mechanism at TIGHT_STAGE1 draws per data set: over 200 noise seeds eps_lb / eps_a had mean 0.96,
  standard deviation 0.008 and minimum 0.94, so eps_a / 2 lies about 58 standard deviations below
  the mean (a normal approximation puts the failure probability far below 1e-12).

The long audits (more draws, every pair and stage) are marked `audit` and deselected by default:
run them with `python -m pytest -m audit tests/test_privacy_audit.py`.
"""

import audit as A
import numpy as np
import pytest
from scipy import stats

DRAWS = 10_000  # whole runs of run_private per data set
STAGE1_DRAWS = 100_000  # vectorised stage-1 draws per data set
TIGHT_STAGE1 = 200_000  # the tightest pair audits stage 1 only, with more draws
LONG_DRAWS, LONG_STAGE1 = 100_000, 1_000_000

_CACHE: dict = {}  # draws per data set, shared between the tests (and the two outlier pairs' P)


def pair_draws(name: str, draws: int = DRAWS, stage1: int = STAGE1_DRAWS) -> A.PairDraws:
    """Fits and draws for a pair, made once per data set and size. A failing fit fails the test."""
    return A.draw_pair(A.PAIRS[name], draws, stage1, _CACHE)


@pytest.mark.slow
@pytest.mark.parametrize("stage", list(A.STAGES))
@pytest.mark.parametrize("pair", ["outlier 1e16", "outlier 1e13"])
def test_outlier_pair(pair, stage):
    """One response of 1e16 (or 1e13) among 50,000 rows must not change the release beyond the claim."""
    result = pair_draws(pair).audit(stage)
    assert result.passed, str(result)


def test_separable_pair_ends_alike():
    """Separable labels (no minimiser) and one flipped label end with the same outcomes: bottom."""
    d = pair_draws("separable")
    delta_a = d.spec.budget.lambda_min.delta
    limit = stats.binom.ppf(1.0 - A.ALPHA, DRAWS, delta_a)
    released = [int(runs["released"].sum()) for runs in (d.runs_p, d.runs_q)]
    assert max(released) <= limit, released
    assert set(np.unique(d.runs_p["released"])) == set(np.unique(d.runs_q["released"]))


@pytest.mark.parametrize("stage", list(A.STAGES))
def test_separable_pair(stage):
    result = pair_draws("separable").audit(stage)
    assert result.passed, str(result)


@pytest.mark.parametrize("features", [("m_a",), ("lambda_hat_min",), A.STAGES["stage 1 (lambda_hat_min)"]])
def test_tightest_pair_stage1(features):
    """Counts N and N -+ 1: the Laplace count is tight, so eps_lb must reach eps_a / 2 but not pass eps_a."""
    d = pair_draws("tightest", draws=0, stage1=TIGHT_STAGE1)
    counts = [A.exact_count(p) for p in d.problems]
    assert abs(counts[0] - counts[1]) == 1 and min(counts) > 1, counts
    result = d.audit("stage 1 (lambda_hat_min)", features)
    eps_a = d.spec.budget.lambda_min.epsilon
    assert result.eps_lb <= eps_a, str(result)
    assert result.eps_lb >= 0.5 * eps_a, f"the audit lacks power: {result}"


@pytest.mark.slow
@pytest.mark.parametrize("stage", list(A.STAGES))
def test_large_coefficient_pair(stage):
    """Responses of about 3e5: both data sets are certified, their counts differ by at most one, and no stage or
    the joint release tells them apart beyond the claim."""
    d = pair_draws("large coefficient")
    assert [p.fit.status for p in d.problems] == ["minimiser", "minimiser"]
    counts = [A.exact_count(p) for p in d.problems]
    assert abs(counts[0] - counts[1]) <= 1 and min(counts) > 100, counts
    result = d.audit(stage)
    assert result.passed, str(result)


@pytest.mark.slow
def test_near_threshold_pair_is_borderline():
    """The test (14) passes on P with a probability strictly inside (0.2, 0.8)."""
    d = pair_draws("near threshold")
    assert 0.2 < d.runs_p["passed"].mean() < 0.8, d.runs_p["passed"].mean()


@pytest.mark.parametrize("stage", list(A.STAGES))
def test_near_threshold_pair(stage):
    result = pair_draws("near threshold").audit(stage)
    assert result.passed, str(result)


@pytest.mark.audit
@pytest.mark.parametrize("pair", list(A.PAIRS))
def test_long_audit(pair):
    """Every stage of every pair with LONG_DRAWS runs and LONG_STAGE1 stage-1 draws per data set."""
    d = pair_draws(pair, LONG_DRAWS, LONG_STAGE1)
    results = {stage: d.audit(stage) for stage in d.spec.stages}
    failed = {stage: str(r) for stage, r in results.items() if not r.passed}
    assert not failed, failed
    if pair == "tightest":
        eps_a = d.spec.budget.lambda_min.epsilon
        assert results["stage 1 (lambda_hat_min)"].eps_lb >= 0.5 * eps_a
    if pair == "separable":
        limit = stats.binom.ppf(1.0 - A.ALPHA, LONG_DRAWS, d.spec.budget.lambda_min.delta)
        assert max(d.runs_p["released"].sum(), d.runs_q["released"].sum()) <= limit
