"""The population interval (core.mechanisms.inference): its formulas exactly, and its coverage of the generating
parameter on fresh synthetic logistic samples, where the model holds (the information equality it assumes)."""

import math

import pytest

from core.data import synthetic
from core.mechanisms.curvature import BOUND_SHARE, Curvature, CurvatureInterval
from core.mechanisms.inference import POPULATION_NOTE, algorithm5_population, fallback_population
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.privacy.accounting import RELEASE_SPLIT, make_budget
from core.privacy.gaussian import normal_quantile


def test_algorithm5_population_adds_sampling_in_quadrature():
    p = algorithm5_population(1.0, 0.95, 0.03, 1e-9, 0.5, 10_000, "logistic")
    q = normal_quantile(0.975)
    sampling = math.sqrt(1 / (0.5 * 10_000))
    assert p.sampling_sd == pytest.approx(sampling) and p.privacy_sd == 0.03
    assert p.interval[1] - 1.0 == pytest.approx(q * math.hypot(0.03, sampling) + 1e-9)
    assert p.note == POPULATION_NOTE and "simple random sample" in p.note and "logistic model holds" in p.note
    assert algorithm5_population(1.0, 0.95, 0.03, 0.0, 0.5, 10_000, "robust") is None  # no information equality
    assert algorithm5_population(1.0, 0.95, 0.03, 0.0, 0.0, 10_000, "logistic") is None


def _curvature(bound, lambda_hat=0.01):
    return Curvature(lambda_hat=lambda_hat, bound=bound, reason="", scale_1=1e-4, scale_2=0.1, epsilon=0.3, delta=1e-7,
                     beta=0.01, mu=0.02, norm=20.0)


def test_fallback_population_uses_U_with_its_own_quantile_and_bias():
    ci = CurvatureInterval(half=0.05 + 0.002 + 0.01 + 1e-8, noise=0.05, bias=0.002, slack=1e-8, level=0.9, quantile=1.7,
                           point_norm=5.0, remainder=0.01, reach=0.1, c_bar=1e-3)
    p = fallback_population(-0.3, ci, 1e-3, _curvature(40.0), 100_000, "logistic")
    assert p.level == 0.9 and p.privacy_sd == pytest.approx(0.04)
    # U bounds ||(H + lam_reg I)^-1 u||, the problem's own matrix: the sampling sd is sqrt(U/n)
    sampling = math.sqrt(40.0 / 100_000)
    assert p.sampling_sd == pytest.approx(sampling)
    # the private interval's noise term and the sampling term at the union bound's quantile (U's tail takes
    # BOUND_SHARE of a = 0.1) add in quadrature; its bias, remainder and slack are kept whole
    q = normal_quantile(1 - (1 - BOUND_SHARE) * 0.1 / 2)
    half = math.hypot(0.05, q * sampling) + 0.002 + 0.01 + 1e-8
    assert p.interval == pytest.approx((-0.3 - half, -0.3 + half), rel=1e-12)
    # with no sampling at all it is the private interval itself
    assert fallback_population(-0.3, ci, 1e-3, _curvature(40.0), 10**30, "logistic").interval == pytest.approx(
        (-0.3 - ci.half, -0.3 + ci.half), rel=1e-12)
    assert fallback_population(-0.3, None, 1e-3, _curvature(40.0), 100_000, "logistic") is None
    assert fallback_population(-0.3, ci, 1e-3, _curvature(None), 100_000, "logistic") is None
    assert fallback_population(-0.3, ci, 1e-3, _curvature(40.0), 100_000, "robust") is None


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_population_interval_covers_theta_star(epsilon):
    """300 fresh samples (n = 20,000, d = 3, logistic) at level 0.9: the population interval covers the generating
    theta*_0 in at least 0.9 - 3 standard errors of them (a correct interval fails this with probability about
    1e-3), and it is wider than the private interval (sampling adds to it)."""
    level, samples, covered, branches = 0.9, 300, 0, set()
    b = make_budget(epsilon, 1e-6, RELEASE_SPLIT)
    rng = make_rng(99)
    for seed in range(samples):
        data = synthetic(20_000, 3, "logistic", seed=1000 + seed)
        r = run_private(prepare(data.X, data.y, "logistic"), 0, b, rng, level=level, fallback=True).release
        assert r.population is not None, r.reason
        branches.add(r.status)
        lo, hi = r.population.interval
        covered += lo <= data.theta_star[0] <= hi
        assert hi - lo > r.interval[1] - r.interval[0]
    coverage = covered / samples
    assert coverage >= level - 3 * math.sqrt(level * (1 - level) / samples), coverage
    print(f"eps = {epsilon}: branches {branches}, population coverage {coverage:.3f} at level {level}")


def test_the_documents_carry_the_population_interval():
    import dataclasses

    from core.report import release_document

    data = synthetic(20_000, 3, "logistic", seed=5)
    p = prepare(data.X, data.y, "logistic")
    run = run_private(p, 0, make_budget(8.0, 1e-6, RELEASE_SPLIT), make_rng(1), fallback=True)
    assert run.release.population is not None
    doc = release_document(p, 0, [run])
    want = dataclasses.asdict(run.release.population)
    assert doc["release"]["population"] == want | {"interval": list(want["interval"])}
