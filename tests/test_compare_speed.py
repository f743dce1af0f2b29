"""What `compare` shares across draws changes no draw's law: warm-started fits, cached rows, batched sampling.

Statistical tests run on fixed seeds, so they are deterministic; each threshold is stated with the
probability that a correct implementation would fail it on a random seed.
"""

import math

import numpy as np
import pytest
from conftest import binomial_pvalue
from scipy import stats
from scipy.linalg import cho_solve

import core.mechanisms.dp_sgd
from core.data import synthetic
from core.errors import InputError
from core.estimator.fit import fit
from core.estimator.losses import LOGISTIC, ROBUST
from core.mechanisms.baselines import objective_perturbation, oracle, output_perturbation
from core.mechanisms.dp_sgd import (
    DPSGDConfig,
    calibrate_noise_multiplier,
    clipped_weights,
    dp_sgd,
    dp_sgd_theta,
    poisson_batch,
    poisson_batches,
)
from core.mechanisms.full_vector import (
    OUTPUT_PERTURBATION_LAMBDA,
    objective_perturbation_parameters,
    objective_perturbation_vector,
    objective_warm_start,
    regularised_fit_theta,
    ridge_start,
    third_derivative,
)
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.methods.compare import METHODS, compare
from core.privacy.accounting import split_budget

Z_LIMIT = 4.4  # a two-sided standard normal exceeds it with probability 1.1e-5
P_LIMIT = 1e-3  # a test with an exact (or asymptotic) null rejects a correct sampler with probability 1e-3
FAST = DPSGDConfig(steps=40, accountant="rdp", neighbours="add_remove")


@pytest.fixture(scope="module", params=["robust", "logistic"])
def problem(request):
    data = synthetic(20_000, 5, request.param, theta_norm=1.0, seed=3)
    return prepare(data.X, data.y, request.param, "cube", feature_names=data.feature_names)


@pytest.mark.parametrize("loss", [ROBUST, LOGISTIC])
def test_third_derivative_is_the_derivative_of_h2(loss):
    rng = np.random.default_rng(0)
    t = rng.normal(0, 3, 200)
    y = rng.choice([-1.0, 1.0], 200) if loss is LOGISTIC else rng.normal(0, 3, 200)
    e = 1e-5
    central = (loss.d2(t + e, y) - loss.d2(t - e, y)) / (2 * e)
    np.testing.assert_allclose(third_derivative(loss, t, y), central, atol=1e-9)


@pytest.mark.parametrize("eps", [4.0, 0.5])
def test_warm_start_gives_the_cold_minimiser_both_certified(problem, eps):
    """Same b, cold (from 0) and warm: both certified (true gradient norm at most tau), within their certified
    distances."""
    delta, g = 1e-6, problem.geometry
    lam, s = objective_perturbation_parameters(problem, eps, delta)
    warm = objective_warm_start(problem, eps, delta)
    rng = np.random.default_rng(8)
    for _ in range(4):
        b = s * rng.standard_normal(problem.d)
        cold = fit(problem.X, problem.y, g.loss, lam, linear=b, radius=g.r)
        start = warm.start(b)
        hot = fit(problem.X, problem.y, g.loss, lam, linear=b, radius=g.r, start=start)
        for f in (cold, hot):
            assert f.has_minimiser and f.grad_norm <= f.grad_tol
        assert np.linalg.norm(hot.theta - cold.theta) <= hot.distance + cold.distance
        assert hot.iterations < cold.iterations


def test_warm_start_error_is_third_order(problem):
    """Shrinking b four times divides the start's error by ~64 (O(||b||^3)); a wrong second-order term
    would leave an O(||b||^2) error, divided by ~16, as the first-order start's is."""
    eps, delta, g = 1.0, 1e-6, problem.geometry
    lam, s = objective_perturbation_parameters(problem, eps, delta)
    warm = objective_warm_start(problem, eps, delta)
    b = s * np.random.default_rng(12).standard_normal(problem.d)
    second, first = [], []
    for scale in (1.0, 0.25):
        exact = fit(problem.X, problem.y, g.loss, lam, linear=scale * b, radius=g.r).theta
        second.append(np.linalg.norm(warm.start(scale * b) - exact))
        first.append(np.linalg.norm(warm.theta - cho_solve(warm.factor, scale * b) - exact))
    assert 10 < first[0] / first[1] < 24
    assert second[0] / second[1] > 40 and second[0] < first[0]


@pytest.mark.parametrize("lam", [OUTPUT_PERTURBATION_LAMBDA, 1e-5])
def test_ridge_start_gives_the_cold_fit(problem, lam):
    """The data-only regularised fits: from one Newton step off theta(P_n) and from 0, both certified."""
    g = problem.geometry
    cold = fit(problem.X, problem.y, g.loss, lam, radius=g.r)
    hot = fit(problem.X, problem.y, g.loss, lam, radius=g.r, start=ridge_start(problem.fit, lam))
    for f in (cold, hot):
        assert f.has_minimiser and f.grad_norm <= f.grad_tol
    assert np.linalg.norm(hot.theta - cold.theta) <= hot.distance + cold.distance
    assert hot.iterations < cold.iterations


def test_warm_start_is_for_its_own_budget(problem):
    warm = objective_warm_start(problem, 4.0, 1e-6)
    with pytest.raises(InputError, match="another"):
        objective_perturbation_vector(problem, 2.0, 1e-6, make_rng(0), warm)


def test_compare_draws_equal_the_per_draw_reference():
    """Bit for bit for every method but objective perturbation, whose warm fit agrees to 1e-9.

    The reference calls each method's own function draw after draw on one generator, as compare did
    before it shared anything (output perturbation's theta_lam is the shared fit, whose agreement
    with a cold fit test_ridge_start_gives_the_cold_fit checks); objective perturbation consumes the
    same draws (b) either way, so the methods after it see the same generator state.
    """
    data = synthetic(20_000, 5, "robust", theta_norm=1.0, seed=4)
    p = prepare(data.X, data.y, feature_names=data.feature_names)
    budget, k = split_budget(4.0, 1e-6), 3
    eps, dlt = budget.epsilon_total, budget.delta_total
    got = compare(p, 1, budget, k, make_rng(9), METHODS, dp_sgd_config=FAST).methods
    rng = make_rng(9)
    lam = OUTPUT_PERTURBATION_LAMBDA
    theta_lam = regularised_fit_theta(p, lam, start=ridge_start(p.fit, lam))  # compare's fit, checked below
    reference = {
        "local": lambda: run_private(p, 1, budget, rng).release.value,
        "oracle": lambda: oracle(p, 1, eps, dlt, rng).value,
        "output_perturbation": lambda: output_perturbation(p, 1, eps, dlt, rng, theta_lam=theta_lam).value,
        "objective_perturbation": lambda: objective_perturbation(p, 1, eps, dlt, rng).value,
        "dp_sgd": lambda: dp_sgd(p, 1, eps, dlt, rng, FAST).value,
    }
    for name in METHODS:
        want = [reference[name]() for _ in range(k)]
        if name == "objective_perturbation":
            np.testing.assert_allclose(got[name].values, want, rtol=0, atol=1e-9)
        else:
            assert got[name].values == tuple(want), name


def batch_sizes(offsets):
    return np.diff(np.asarray(offsets))


@pytest.mark.parametrize("n, q", [(60, 0.2), (60, 0.7)])
def test_poisson_batches_sizes_are_binomial(n, q):
    """Mean and variance of the sizes against Binomial(n, q) (z-tests), and a chi-square on the histogram."""
    steps = 20_000
    idx, offsets = poisson_batches(np.random.default_rng(1), n, q, steps)
    sizes = batch_sizes(offsets)
    assert offsets[0] == 0 and offsets[-1] == idx.size
    mean, var = n * q, n * q * (1 - q)
    assert abs(sizes.mean() - mean) / math.sqrt(var / steps) < Z_LIMIT
    mu4 = var * (1 + 3 * (n - 2) * q * (1 - q))  # the binomial's fourth central moment
    assert abs(sizes.var(ddof=1) - var) / math.sqrt((mu4 - var**2) / steps) < Z_LIMIT
    assert binomial_pvalue(sizes, n, q) > P_LIMIT


@pytest.mark.parametrize("n, q", [(60, 0.2), (60, 0.7)])
def test_poisson_batches_include_each_record_independently_with_probability_q(n, q):
    """Per-record inclusion counts are Binomial(steps, q) (chi-square over records); pairs at q^2 (z-tests).

    At n = 60, q = 0.2 a batch of about 12 i.i.d. draws repeats an index about once in two batches, so
    the redraw of duplicates is exercised; q = 0.7 is the batch-by-batch path.
    """
    steps = 20_000
    idx, offsets = poisson_batches(np.random.default_rng(2), n, q, steps)
    member = np.zeros((steps, n), dtype=bool)
    for t in range(steps):
        batch = idx[offsets[t] : offsets[t + 1]]
        assert np.unique(batch).size == batch.size and batch.min(initial=0) >= 0 and batch.max(initial=0) < n
        member[t, batch] = True
    counts = member.sum(axis=0)
    chi2 = float((((counts - steps * q) ** 2) / (steps * q * (1 - q))).sum())
    assert stats.chi2.sf(chi2, n) > P_LIMIT
    for i, j in [(0, 1), (0, n - 1), (17, 42)]:
        both = int((member[:, i] & member[:, j]).sum())
        assert abs(both - steps * q * q) / math.sqrt(steps * q * q * (1 - q * q)) < Z_LIMIT


def test_poisson_batches_at_scale_and_at_full_rate():
    idx, offsets = poisson_batches(np.random.default_rng(3), 10**6, 1e-3, 50)
    for t in range(50):
        batch = idx[offsets[t] : offsets[t + 1]]
        assert np.unique(batch).size == batch.size and 0 <= batch.min() and batch.max() < 10**6
    idx, offsets = poisson_batches(np.random.default_rng(4), 25, 1.0, 3)
    assert offsets == [0, 25, 50, 75] and sorted(idx[25:50].tolist()) == list(range(25))


def previous_dp_sgd_theta(p, epsilon, delta, rng, config):
    """DP-SGD as it ran before batching its draws: one batch and one noise vector per step."""
    n, d = p.X.shape
    q, lam = config.sampling_rate(n), p.fit.lam_reg
    z = calibrate_noise_multiplier(epsilon, delta, q, config.steps, config.accountant, config.neighbours)
    lr, C = 1.0 / (p.geometry.G1 + lam), config.clip_norm
    norms = np.linalg.norm(p.X, axis=1)
    theta, total = np.zeros(d), np.zeros(d)
    for step in range(config.steps):
        i = poisson_batch(rng, n, q)
        w = clipped_weights(p.X[i] @ theta, p.y[i], norms[i], p.geometry.loss, C)
        theta = theta - lr * ((p.X[i].T @ w + z * C * rng.standard_normal(d)) / (q * n) + lam * theta)
        if step >= config.steps - config.averaged_steps():
            total += theta
    return total / config.averaged_steps()


@pytest.mark.parametrize("block", [None, 100])
def test_dp_sgd_output_has_the_previous_law(monkeypatch, block):
    """Two-sample KS per coordinate, 400 draws each; Bonferroni over 3 coordinates keeps the error <= 3e-3.

    block = 100 draws the batches (about 40 indices each) two steps at a time.
    """
    if block is not None:
        monkeypatch.setattr(core.mechanisms.dp_sgd, "SAMPLE_BLOCK", block)
    data = synthetic(400, 3, "robust", theta_norm=1.0, seed=6)
    p = prepare(data.X, data.y, feature_names=data.feature_names)
    cfg = DPSGDConfig(steps=20, batch_size=40, accountant="rdp", neighbours="add_remove")
    rng_new, rng_old = np.random.default_rng(10), np.random.default_rng(11)
    new = np.array([dp_sgd_theta(p, 1.0, 1e-6, rng_new, cfg)[0] for _ in range(400)])
    old = np.array([previous_dp_sgd_theta(p, 1.0, 1e-6, rng_old, cfg) for _ in range(400)])
    for j in range(p.d):
        assert stats.ks_2samp(new[:, j], old[:, j]).pvalue > P_LIMIT, j
