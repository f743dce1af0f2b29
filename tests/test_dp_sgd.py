"""DP-SGD (core.mechanisms.dp_sgd): calibration, sampling, clipping, accuracy against an a-priori prediction,
and the compiled steps and batches against their NumPy fallback."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import binomial_pvalue
from scipy import stats

import core.mechanisms.dp_sgd
from core.data import synthetic
from core.estimator.losses import LOGISTIC, ROBUST
from core.mechanisms.dp_sgd import (
    DPSGDConfig,
    calibrate_noise_multiplier,
    clipped_weights,
    dp_sgd,
    dp_sgd_epsilon,
    dp_sgd_theta,
    poisson_batch,
    poisson_batches,
    sgd_rows,
)
from core.mechanisms.pipeline import prepare
from core.privacy.gaussian import sigma_analytic

DELTA = 1e-6
# The SGD mechanics do not depend on the accountant: the fast one keeps these tests quick.
FAST = dict(accountant="rdp", neighbours="add_remove")


@pytest.mark.parametrize(
    "epsilon, delta, q, steps, accountant, neighbours",
    [
        (1.0, 1e-6, 1e-3, 1000, "rdp", "add_remove"),
        (4.0, 1e-6, 5e-3, 1000, "rdp", "add_remove"),
        (0.5, 1e-5, 0.05, 200, "rdp", "add_remove"),
        (2.0, 1e-6, 1.0, 10, "rdp", "add_remove"),
        (2.0, 1e-6, 0.01, 100, "pld", "add_remove"),
        (2.0, 1e-6, 0.01, 100, "pld", "replace_one"),
    ],
)
def test_calibration_is_safe_and_tight(epsilon, delta, q, steps, accountant, neighbours):
    z = calibrate_noise_multiplier(epsilon, delta, q, steps, accountant, neighbours)
    assert dp_sgd_epsilon(z, delta, q, steps, accountant, neighbours) <= epsilon
    assert dp_sgd_epsilon(0.99 * z, delta, q, steps, accountant, neighbours) > epsilon


def test_full_batch_single_step_is_the_gaussian_mechanism():
    """q = 1, T = 1: add/remove has sensitivity C, replace-one 2C; both match the analytic Gaussian."""
    eps, dlt = 1.0, 1e-5
    s = sigma_analytic(eps, dlt)
    assert calibrate_noise_multiplier(eps, dlt, 1.0, 1, "pld", "add_remove") == pytest.approx(s, rel=2e-3)
    assert calibrate_noise_multiplier(eps, dlt, 1.0, 1, "pld", "replace_one") == pytest.approx(2 * s, rel=2e-3)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0.0, DELTA, 0.1, 10), "epsilon"),
        ((1.0, 1.0, 0.1, 10), "delta"),
        ((1.0, DELTA, 0.0, 10), "sampling rate"),
        ((1.0, DELTA, 1.5, 10), "sampling rate"),
        ((1.0, DELTA, 0.1, 0), "number of steps"),
        ((1.0, DELTA, 0.1, 2.5), "number of steps"),
    ],
)
def test_calibration_rejects_bad_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        calibrate_noise_multiplier(*args)


def test_poisson_batch_is_poisson_sampling():
    """Sizes are Binomial(n, q), indices distinct, and every record is included w.p. q independently."""
    n, q, draws = 60, 0.2, 20_000
    rng = np.random.default_rng(1)
    sizes = np.empty(draws, dtype=int)
    counts = np.zeros(n)
    for k in range(draws):
        idx = poisson_batch(rng, n, q)
        assert np.unique(idx).size == idx.size and np.all((idx >= 0) & (idx < n))
        sizes[k] = idx.size
        counts[idx] += 1
    # Chi-square of the sizes against Binomial(n, q), tails merged so every bin expects >= 5.
    assert binomial_pvalue(sizes, n, q) > 1e-3
    # Per-record inclusion counts: independent Binomial(draws, q), so the standardised squares sum to ~chi2_n.
    chi2 = float((((counts - draws * q) ** 2) / (draws * q * (1 - q))).sum())
    assert stats.chi2.sf(chi2, n) > 1e-3


def test_poisson_batch_full_rate_takes_everyone():
    idx = poisson_batch(np.random.default_rng(0), 25, 1.0)
    assert sorted(idx.tolist()) == list(range(25))


@pytest.mark.parametrize("loss", [ROBUST, LOGISTIC])
def test_clipping_bounds_every_per_example_gradient(loss):
    rng = np.random.default_rng(2)
    m, d, C = 5000, 4, 0.7
    X = rng.uniform(-1, 1, size=(m, d))
    y = rng.choice([-1.0, 1.0], size=m) if loss is LOGISTIC else rng.normal(0, 3, size=m)
    t = rng.normal(0, 3, size=m)
    t[:10] = y[:10] if loss is ROBUST else t[:10]  # h' = 0 for the robust loss: must not give NaN
    norms = np.linalg.norm(X, axis=1)
    w = clipped_weights(t, y, norms, loss, C)
    s = loss.d1(t, y)
    clipped, raw = np.abs(w) * norms, np.abs(s) * norms  # ||w_i x_i|| and ||g_i||
    assert np.all(np.isfinite(w)) and np.all(clipped <= C * (1 + 1e-12))
    short = raw <= C
    assert short.any() and (~short).any()
    np.testing.assert_array_equal(w[short], s[short])  # short gradients are untouched
    np.testing.assert_allclose(clipped[~short], C, rtol=1e-12)  # long ones are scaled onto the sphere
    assert np.all(np.sign(w) == np.sign(s))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"clip_norm": 0.0}, "clip_norm"),
        ({"clip_norm": -1.0}, "clip_norm"),
        ({"clip_norm": math.inf}, "clip_norm"),
        ({"clip_norm": math.nan}, "clip_norm"),
        ({"clip_norm": "1"}, "clip_norm"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 10.5}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"steps": 0}, "steps"),
        ({"steps": 100.0}, "steps"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"learning_rate": math.nan}, "learning_rate"),
        ({"average_fraction": -0.1}, "average_fraction"),
        ({"average_fraction": 1.5}, "average_fraction"),
        ({"average_fraction": math.nan}, "average_fraction"),
        ({"accountant": "moments"}, "accountant must be one of rdp, pld"),
        ({"neighbours": "swap"}, "neighbours must be one of"),
        ({"neighbours": "replace_one", "accountant": "rdp"}, "needs accountant='pld'"),
    ],
)
def test_bad_config_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DPSGDConfig(**kwargs)


def test_config_defaults_and_derived_values():
    c = DPSGDConfig()
    assert (c.clip_norm, c.batch_size, c.steps, c.learning_rate, c.average_fraction) == (1.0, 1000, 1000, None, 0.5)
    assert (c.accountant, c.neighbours) == ("pld", "replace_one")
    assert c.sampling_rate(10**6) == 1e-3 and c.sampling_rate(500) == 1.0
    assert c.averaged_steps() == 500 and DPSGDConfig(average_fraction=0.0).averaged_steps() == 1
    DPSGDConfig(neighbours="add_remove", accountant="rdp")


def test_release_fields_and_reproducibility(robust_problem):
    p = robust_problem
    cfg = DPSGDConfig(steps=200, **FAST)
    out = dp_sgd(p, 1, 2.0, DELTA, np.random.default_rng(7), cfg)
    theta, z = dp_sgd_theta(p, 2.0, DELTA, np.random.default_rng(7), cfg)
    assert out.method == "dp_sgd" and out.private and out.value == float(theta[1])
    assert out.noise_scale == z == calibrate_noise_multiplier(2.0, DELTA, cfg.sampling_rate(p.n), 200, **FAST)
    assert (out.epsilon, out.delta, out.lambda_reg) == (2.0, DELTA, p.fit.lam_reg)
    assert out.u_theta == float(p.fit.theta[1]) and out.seconds > 0
    with pytest.raises(ValueError, match="epsilon"):
        dp_sgd(p, 0, -1.0, DELTA, np.random.default_rng(0))


@pytest.mark.parametrize("vacuous_clip", [False, True])
def test_large_budget_recovers_the_fit(robust_problem, vacuous_clip):
    """eps = 1e4: z = 0.12, so what is left is batch sampling noise (sd ~ 0.003 here) and clipping bias."""
    p = robust_problem
    cfg = DPSGDConfig(clip_norm=p.geometry.G0, **FAST) if vacuous_clip else DPSGDConfig(**FAST)
    for j in range(p.d):
        out = dp_sgd(p, j, 1e4, DELTA, np.random.default_rng(100 + j), cfg)
        assert out.noise_scale < 0.15
        assert abs(out.value - out.u_theta) < 0.015


@pytest.fixture(scope="module")
def problem_200k():
    data = synthetic(200_000, 5, "robust", theta_norm=1.0, seed=5)
    return prepare(data.X, data.y, "robust", "cube")


def predicted_sd(p, z, cfg):
    """A-priori sd of u^T theta_hat - u^T theta(P_n) for u = e_j, with clipping vacuous (C >= G0).

    Near theta = theta(P_n) a step is theta+ - theta = (I - eta H)(theta - theta) - eta xi with
    E xi = 0 and Cov xi = Sigma = (z C/(q n))^2 I + ((1 - q)/(q n)) M, M = P_n g g^T at theta(P_n)
    (privacy noise plus Poisson batch noise, both over the fixed denominator q n). Averaging m
    iterates after burn-in gives theta_bar - theta ~ -H^{-1} (1/m) sum xi_t (Polyak & Juditsky), so
    sd_j = sqrt((H^{-1} Sigma H^{-1})_jj / m), up to O(1/(eta lambda_min m)) ~ 4% here.
    """
    n, C, q, m = p.n, cfg.clip_norm, cfg.sampling_rate(p.n), cfg.averaged_steps()
    g = p.geometry.loss.d1(p.X @ p.fit.theta, p.y)[:, None] * p.X
    sigma = (z * C / (q * n)) ** 2 * np.eye(p.d) + (1 - q) / (q * n) * (g.T @ g / n)
    Hinv = np.linalg.inv(p.fit.hessian)
    return np.sqrt(np.diag(Hinv @ sigma @ Hinv) / m)


def test_error_matches_prediction_and_shrinks_with_epsilon(problem_200k):
    """n = 2e5, d = 5, C = G0: at eps = 4 batch noise dominates (sd 0.0031), at eps = 0.1 privacy noise does (0.006)."""
    p = problem_200k
    cfg = DPSGDConfig(clip_norm=p.geometry.G0, **FAST)
    rms = {}
    for eps in (4.0, 0.1):
        z = calibrate_noise_multiplier(eps, DELTA, cfg.sampling_rate(p.n), cfg.steps, **FAST)
        sd = predicted_sd(p, z, cfg)
        errs = np.array([dp_sgd_theta(p, eps, DELTA, np.random.default_rng(s), cfg)[0] - p.fit.theta
                         for s in range(8)])
        ratio = math.sqrt(float(np.mean((errs / sd) ** 2)))  # 40 standardised errors
        assert 0.6 < ratio < 1.5, (eps, ratio)
        rms[eps] = math.sqrt(float(np.mean(errs**2)))
    assert rms[0.1] > 1.3 * rms[4.0]


def test_default_config_error_is_small(problem_200k):
    """With the default C = 1 clipping is active, which adds a bias; the error stays well under 0.05."""
    p = problem_200k
    for seed in range(3):
        out = dp_sgd(p, 0, 4.0, DELTA, np.random.default_rng(seed))
        assert abs(out.value - out.u_theta) < 0.02


compiled = pytest.mark.skipif(core.mechanisms.dp_sgd.STEPS_KERNEL is None,
                              reason="the compiled loops are off (no numba or PSP_NO_JIT=1)")
ROOT = Path(__file__).resolve().parents[1]
AGREE = 1e-12  # compiled against NumPy: the order of a sum's terms and libm's last bit, compounded over T steps


def without_kernels(monkeypatch):
    monkeypatch.setattr(core.mechanisms.dp_sgd, "STEPS_KERNEL", None)
    monkeypatch.setattr(core.mechanisms.dp_sgd, "DISTINCT_KERNEL", None)


@compiled
@pytest.mark.parametrize(
    "loss, n, d, lam_reg, config",
    [
        ("robust", 20_000, 5, 0.0, DPSGDConfig(steps=300, **FAST)),
        ("robust", 3_000, 17, 1e-2, DPSGDConfig(steps=200, clip_norm=0.3, average_fraction=0.0, **FAST)),
        ("robust", 300, 1, 0.0, DPSGDConfig(steps=100, batch_size=200, **FAST)),  # q = 2/3: one batch at a time
        ("logistic", 5_000, 3, 1e-3, DPSGDConfig(steps=300, learning_rate=2.0, **FAST)),
        ("logistic", 100_000, 6, 0.0, DPSGDConfig(steps=100, clip_norm=5.0, **FAST)),
    ],
)
def test_compiled_steps_give_the_numpy_theta(monkeypatch, loss, n, d, lam_reg, config):
    """Same seed, same theta_hat and z to 1e-12, compiled or not; SAMPLE_BLOCK = 4000 splits the run into blocks."""
    monkeypatch.setattr(core.mechanisms.dp_sgd, "SAMPLE_BLOCK", 4000)
    data = synthetic(n, d, loss, theta_norm=1.0, seed=n + d)
    p = prepare(data.X, data.y, loss, "cube", lam_reg=lam_reg)
    fast, z = dp_sgd_theta(p, 1.0, DELTA, np.random.default_rng(5), config)
    without_kernels(monkeypatch)
    slow, z_slow = dp_sgd_theta(p, 1.0, DELTA, np.random.default_rng(5), config)
    assert z == z_slow
    assert np.linalg.norm(fast - slow) <= AGREE * np.linalg.norm(slow)
    np.testing.assert_allclose(fast, slow, rtol=AGREE, atol=AGREE * np.linalg.norm(slow))
    other, _ = dp_sgd_theta(p, 1.0, DELTA, np.random.default_rng(6), config)
    assert np.linalg.norm(other - slow) > 1e-6 * np.linalg.norm(slow)  # the comparison can fail: seeds matter


@compiled
@pytest.mark.parametrize("n, q, steps", [(60, 0.2, 3000), (1000, 0.05, 400), (10**5, 1e-3, 300), (50, 0.5, 200)])
def test_compiled_batches_are_the_sorted_batches(monkeypatch, n, q, steps):
    """Marking and sorting find the same distinct indices in the same stream: equal sets, equal generator states.

    At n = 60, q = 0.2 about half the batches repeat an index, and q = 0.5, n = 50 (25 draws a batch)
    needs several rounds; the sorted path returns each batch sorted, the marked one in stream order.
    """
    rng = np.random.default_rng(8)
    idx, offsets = poisson_batches(rng, n, q, steps)
    without_kernels(monkeypatch)
    rng_ref = np.random.default_rng(8)
    ref, ref_offsets = poisson_batches(rng_ref, n, q, steps)
    assert offsets == ref_offsets and idx.size == offsets[-1]
    for t in range(steps):
        np.testing.assert_array_equal(np.sort(idx[offsets[t] : offsets[t + 1]]), ref[offsets[t] : offsets[t + 1]])
    assert rng.bit_generator.state == rng_ref.bit_generator.state


@compiled
@pytest.mark.parametrize("loss", [ROBUST, LOGISTIC])
@pytest.mark.parametrize("margin", [None, 800.0])
def test_compiled_step_is_the_clipped_gradient_step(loss, margin):
    """A full-batch step with lr = denom = 1, lam = 0, no noise: theta - theta+ = sum_i w_i x_i (clipped_weights).

    Rows 0-4 have h' = 0 exactly (robust: y = t); with margin = 800, theta is scaled so that row 5
    has |y - t| = 800 (robust: exp(-|u|) = 0) or y t = 800 (logistic: exp overflows, h' = -0).
    """
    rng = np.random.default_rng(3)
    m, d, C = 4000, 4, 0.7
    X = rng.uniform(-1, 1, size=(m, d))
    theta = rng.normal(0, 2, size=d)
    if margin is not None:
        theta *= margin / abs(X[5] @ theta)
    t = X @ theta
    y = np.sign(rng.normal(size=m)) if loss is LOGISTIC else t + rng.normal(0, 3, size=m)
    if loss is ROBUST:
        y[:5] = t[:5]
        y[5] = 0.0 if margin else y[5]
    else:
        y[5] = np.sign(t[5])
    rows = np.column_stack([y, X, np.linalg.norm(X, axis=1)])
    want = X.T @ clipped_weights(t, y, rows[:, d + 1], loss, C)
    after, total = theta.copy(), np.zeros(d)
    step, kind = (1.0, 1.0, 0.0, C, 0), {"robust": 0, "logistic": 1}[loss.name]
    offsets = np.array([0, m], dtype=np.int64)
    core.mechanisms.dp_sgd.STEPS_KERNEL(rows, np.arange(m, dtype=np.int64), offsets, np.zeros((1, d)), after, total,
                                        0, step, kind)
    np.testing.assert_allclose(theta - after, want, rtol=1e-12, atol=1e-13 * m)
    np.testing.assert_array_equal(total, after)
    assert np.abs(want).max() > 1.0  # many clipped terms, not a vacuous sum


NO_JIT_SCRIPT = """
import json, sys
import numpy as np
import core.mechanisms.dp_sgd as D
from core.data import synthetic
from core.mechanisms.pipeline import prepare
out = {"jit": D.STEPS_KERNEL is not None}
for loss, n, d in json.loads(sys.argv[1]):
    data = synthetic(n, d, loss, theta_norm=1.0, seed=3)
    p = prepare(data.X, data.y, loss, "cube")
    cfg = D.DPSGDConfig(steps=200, accountant="rdp", neighbours="add_remove")
    out[loss] = D.dp_sgd_theta(p, 1.0, 1e-6, np.random.default_rng(4), cfg)[0].tolist()
print(json.dumps(out))
"""


@compiled
def test_no_jit_process_gives_the_same_theta():
    """PSP_NO_JIT=1 in a fresh process (the NumPy steps) against the compiled steps in this one."""
    cases = [("robust", 5000, 5), ("logistic", 5000, 3)]
    env = {**os.environ, "PSP_NO_JIT": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_JIT_SCRIPT, json.dumps(cases)], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    fallback = json.loads(done.stdout)
    assert fallback.pop("jit") is False
    for loss, n, d in cases:
        data = synthetic(n, d, loss, theta_norm=1.0, seed=3)
        p = prepare(data.X, data.y, loss, "cube")
        cfg = DPSGDConfig(steps=200, **FAST)
        here = dp_sgd_theta(p, 1.0, DELTA, np.random.default_rng(4), cfg)[0]
        np.testing.assert_allclose(here, fallback[loss], rtol=AGREE, atol=AGREE * np.linalg.norm(here))


def test_sgd_rows_layout(robust_problem):
    """(y, x, ||x||): the scalars first and last, the kernels' and the NumPy steps' shared layout."""
    p = robust_problem
    rows = sgd_rows(p)
    assert rows.shape == (p.n, p.d + 2) and rows.flags.c_contiguous
    np.testing.assert_array_equal(rows[:, 0], p.y)
    np.testing.assert_array_equal(rows[:, 1 : p.d + 1], p.X)
    np.testing.assert_allclose(rows[:, -1], np.linalg.norm(p.X, axis=1), rtol=1e-15)
