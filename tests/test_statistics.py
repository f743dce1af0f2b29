"""Distributional checks over 2000 draws each, with stage deltas set large so rates are measurable.

Each test would fail with probability at most 1e-3 for a correct implementation and a random seed
(binomial and Kolmogorov-Smirnov tests at level 1e-3); the seeds are fixed, so runs are repeatable.
"""

import numpy as np
import pytest
from scipy import stats

from core.mechanisms.certificates import lambda_max_certificate, lambda_min_certificate
from core.mechanisms.pipeline import run_private
from core.privacy.accounting import Budget, StageBudget

DRAWS = 2000
LEVEL = 1e-3


def consistent_rate(failures: int, p: float) -> bool:
    """Two-sided exact binomial test: the failure rate is p (floor makes P(fail) = delta exactly)."""
    return stats.binomtest(failures, DRAWS, p).pvalue > LEVEL


def test_lambda_min_certificate_fails_at_rate_delta(robust_problem):
    rng = np.random.default_rng(1)
    eps, delta = 0.5, 0.1
    draws = [lambda_min_certificate(robust_problem.fit, robust_problem.geometry, eps, delta, rng) for _ in range(DRAWS)]
    failures = sum(b.lambda_hat > robust_problem.fit.lambda_min for b in draws)
    assert consistent_rate(failures, delta), failures
    # N_hat - N is Laplace(1/eps_a).
    noise = np.array([b.N_hat - b.N for b in draws])
    assert stats.kstest(noise, stats.laplace(scale=1 / eps).cdf).pvalue > LEVEL
    # and the bound is useful: most draws certify a positive lambda_hat
    assert np.mean([b.lambda_hat > 0 for b in draws]) > 0.9


def test_lambda_max_certificate_fails_at_rate_delta(logistic_problem):
    rng = np.random.default_rng(2)
    f, g = logistic_problem.fit, logistic_problem.geometry
    eps, delta = 0.5, 0.1
    lam_hat_min = 0.9 * f.lambda_min  # a valid certified lower bound
    draws = [lambda_max_certificate(f, g, lam_hat_min, eps, delta, rng) for _ in range(DRAWS)]
    failures = sum(b.lambda_hat < f.lambda_max for b in draws)
    assert consistent_rate(failures, delta), failures
    noise = np.array([b.N_hat - b.N for b in draws])
    assert stats.kstest(noise, stats.laplace(scale=1 / eps).cdf).pvalue > LEVEL
    assert all(b.lambda_hat <= g.G1 for b in draws)


@pytest.mark.parametrize("calibration", ["paper", "analytic"])
def test_released_noise_is_gaussian_with_sd_sigma_omega(robust_problem, calibration):
    rng = np.random.default_rng(3)
    stage = StageBudget(1.0, 1e-7)
    budget = Budget(6.0, 1e-6, (1 / 3, 1 / 3, 1 / 3), stage, stage, StageBudget(2.0, 1e-7), 6.0, 1e-6)
    runs = [run_private(robust_problem, 1, budget, rng, calibration) for _ in range(DRAWS)]
    released = [r.release for r in runs if r.release.status == "released"]
    assert len(released) > 0.99 * DRAWS
    z = np.array([(r.value - r.u_theta) / (r.sigma * r.omega) for r in released])
    assert stats.kstest(z, "norm").pvalue > LEVEL
    # the private interval covers u^T theta(P_n) at least at its level (omega <= w_bar)
    covered = sum(r.interval[0] <= r.u_theta <= r.interval[1] for r in released)
    assert stats.binomtest(covered, len(released), 0.95, alternative="less").pvalue > LEVEL
    assert all(r.w_bar >= r.omega for r in released)
