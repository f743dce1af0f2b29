"""The stages end to end: the fit, the budget, the release and its document, the full-vector releases."""

import json
import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from core.data import synthetic
from core.estimator.fit import fit
from core.estimator.geometry import make_geometry, project
from core.estimator.losses import ROBUST
from core.mechanisms.full_vector import algorithm3, algorithm7
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.recursion import recursion_down, t_bound
from core.mechanisms.stability import solver_slack, stability_test, threshold
from core.privacy.accounting import RELEASE_SPLIT, basic_composition, split_budget
from core.privacy.gaussian import DEFAULT_CALIBRATION, sigma


def test_logistic_fit_matches_scikit_learn(logistic_problem):
    p = logistic_problem
    ref = LogisticRegression(solver="newton-cholesky", C=np.inf, fit_intercept=False, tol=1e-12).fit(p.X, p.y)
    assert np.allclose(p.fit.theta, ref.coef_[0], atol=1e-8)
    assert p.fit.grad_norm < 1e-10


def test_fit_gradient_includes_the_ridge_and_hessian_excludes_it():
    data = synthetic(3000, 4, "robust", seed=5)
    lam = 0.05
    f = fit(data.X, data.y, ROBUST, lam)
    grad = data.X.T @ ROBUST.d1(data.X @ f.theta, data.y) / 3000 + lam * f.theta
    assert np.linalg.norm(grad) < 1e-10
    w = ROBUST.d2(data.X @ f.theta, data.y)
    assert np.allclose(f.hessian, (data.X * w[:, None]).T @ data.X / 3000, rtol=1e-12, atol=1e-15)
    assert f.lambda_min == pytest.approx(np.linalg.eigvalsh(f.hessian)[0], rel=1e-12)
    assert f.kappa == pytest.approx((f.lambda_max + lam) / (f.lambda_min + lam))


def test_projection_onto_the_domain_is_counted():
    X = np.array([[0.5, 0.5], [2.0, 0.0], [0.0, -3.0], [0.9, 0.9]])
    cube = make_geometry(ROBUST, "cube", 2)
    Xc, k = project(X, cube)
    assert k == 2 and Xc.max() <= 1 and Xc.min() >= -1 and Xc[1].tolist() == [1.0, 0.0]
    ball = make_geometry(ROBUST, "ball", 2, radius=1.0)
    Xb, k = project(X, ball)
    assert k == 3 and np.allclose(np.linalg.norm(Xb[1:], axis=1), 1.0) and Xb[0].tolist() == [0.5, 0.5]


def test_split_meets_the_total_exactly():
    for eps, delta, split in [(1.0, 1e-6, (1, 1, 1)), (4.0, 1e-5, (1, 2, 5)), (0.3, 0.2, (3, 1, 1))]:
        b = split_budget(eps, delta, split)
        assert (b.epsilon_basic, b.delta_basic) == basic_composition(b.lambda_min, b.lambda_max, b.release)
        assert b.epsilon_basic <= eps and b.epsilon_basic == pytest.approx(eps, rel=1e-12)
        assert b.delta_basic <= delta and b.delta_basic == pytest.approx(delta, rel=1e-9)
        w = np.array(split) / sum(split)
        assert b.lambda_min.epsilon == pytest.approx(w[0] * eps)
        assert 2 * b.release.epsilon == pytest.approx(w[2] * eps)
        assert math.exp(b.lambda_min.epsilon + b.lambda_max.epsilon) * b.lambda_min.delta == pytest.approx(w[0] * delta)


def test_released_value_is_the_fit_plus_sigma_omega_z(robust_problem):
    run = run_private(robust_problem, 2, split_budget(6.0, 1e-6), make_rng(7))
    r = run.release
    assert r.status == "released" and run.test.passed
    assert r.u_theta == robust_problem.fit.theta[2]
    t = run.test
    # The multiplier is omega plus the fit's tolerance: (omega + E)/(1 - eta), E and eta tiny but positive.
    assert r.multiplier == (r.omega + t.fit_slack) / (1.0 - t.fit_ratio)
    assert 0 < t.fit_slack < 1e-6 * r.omega and 0 < t.fit_ratio < 1e-8
    assert r.value == pytest.approx(r.u_theta + sigma(r.epsilon, r.delta) * r.multiplier * r.z, rel=1e-14)
    half = (r.interval[1] - r.interval[0]) / 2
    slack = solver_slack(t.lam0, robust_problem.geometry)
    assert half == pytest.approx(1.959963984540054 * r.sigma * r.w_bar + slack, rel=1e-12)
    assert r.Delta <= r.omega < r.multiplier <= r.w_bar
    # the same seed replays the same numbers; another seed does not
    again = run_private(robust_problem, 2, split_budget(6.0, 1e-6), make_rng(7))
    assert again.release.value == r.value
    assert run_private(robust_problem, 2, split_budget(6.0, 1e-6), make_rng(8)).release.value != r.value


def test_a_direction_u_is_normalised(robust_problem):
    run = run_private(robust_problem, np.array([3.0, 4.0, 0.0]), split_budget(6.0, 1e-6), make_rng(1))
    assert np.allclose(run.u, [0.6, 0.8, 0.0])
    assert run.release.u_theta == pytest.approx(run.u @ robust_problem.fit.theta)


def test_small_samples_give_bottom_with_a_reason():
    data = synthetic(300, 5, "robust", seed=3)
    p = prepare(data.X, data.y)
    run = run_private(p, 0, split_budget(1.0, 1e-6), make_rng(0))
    assert run.release.status == "bottom" and run.release.value is None
    assert run.lambda_min.lambda_hat == 0 and run.lambda_max is None
    assert "λ̂min is 0" in run.release.reason


def test_stability_test_threshold_and_failures(robust_problem):
    f, g = robust_problem.fit, robust_problem.geometry
    assert threshold(1.0, 1e-6) == pytest.approx(2.0 / (1 + 4.891638475699412**2), rel=1e-12)
    ok = stability_test(0.99 * f.lambda_min, 1.01 * f.lambda_max, g, f.n, 0.0, 2.0, 1e-7)
    assert ok.passed and ok.value <= ok.threshold and ok.value > 0
    assert ok.t == t_bound(0.99 * f.lambda_min, g, f.n)
    assert ok.kappa == pytest.approx(1.01 * f.lambda_max / (0.99 * f.lambda_min))
    tight = stability_test(0.99 * f.lambda_min, 1.01 * f.lambda_max, g, f.n, 0.0, ok.value / 3, 1e-7)
    assert not tight.passed and "condition (14) fails" in tight.reason
    assert "(C1)" in stability_test(1e-6, 0.2, g, f.n, 0.0, 2.0, 1e-7).reason


def test_ball_domain_runs_condition_14a():
    data = synthetic(60_000, 3, "robust", seed=4)
    p = prepare(data.X / math.sqrt(3), data.y, "robust", "ball", radius=1.0)
    run = run_private(p, 0, split_budget(8.0, 1e-6), make_rng(2))
    assert run.test.passed, run.test.reason
    assert p.geometry.d_p == 1.0


def test_algorithm3_noise_scale_and_accuracy(robust_problem):
    f, g = robust_problem.fit, robust_problem.geometry
    out = algorithm3(f, g, 2.0, 1e-6, make_rng(4))
    assert out.status == "released"
    lam = out.certificate.lambda_hat + f.lam_reg
    # t(lambda_hat + lam_reg), plus the tolerance of the two fits (P_n's and a neighbour's).
    Rl = recursion_down(out.certificate.lambda_hat, g, f.n, f.lam_reg) + f.lam_reg
    scale = t_bound(lam, g, f.n) + 2 * solver_slack(Rl, g)
    assert out.noise_scale == pytest.approx(sigma(1.0, 5e-7) * scale, rel=1e-14)
    assert scale > t_bound(lam, g, f.n)
    assert np.linalg.norm(out.value - f.theta) < 6 * out.noise_scale * math.sqrt(f.d)


def test_algorithm7_needs_condition_c2():
    big = synthetic(400_000, 2, "robust", seed=6)
    p = prepare(big.X, big.y)
    out = algorithm7(p.fit, p.geometry, 4.0, 1e-6, make_rng(5))
    assert out.status == "released" and out.certificate.lambda_hat <= p.fit.lambda_min
    assert np.linalg.norm(out.value - p.fit.theta) < 6 * out.noise_scale * math.sqrt(2)
    small = replace(p.fit, n=100)  # sqrt(12 G0 G2 / n) = 0.30 > lambda_min = 0.13
    assert algorithm7(small, p.geometry, 4.0, 1e-6, make_rng(5)).status == "bottom"


def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "core", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


REQUIRED = {
    "n", "d", "loss", "domain", "coordinate", "clipped_rows", "budget", "fit", "lambda_min", "lambda_max", "test",
    "release",
}


def check_document(doc):
    assert REQUIRED <= set(doc)
    assert set(doc["budget"]) >= {"epsilon_total", "delta_total", "stages"}
    for stage in ("lambda_min", "lambda_max", "release"):
        assert set(doc["budget"]["stages"][stage]) == {"epsilon", "delta"}
    assert set(doc["fit"]) >= {"theta", "lambda_min", "lambda_max", "grad_norm"}
    assert set(doc["lambda_min"]) >= {"N", "N_hat", "k", "m", "lambda_hat"}
    assert doc["lambda_max"] is None or set(doc["lambda_max"]) >= {"N", "N_hat", "k", "m", "lambda_hat"}
    constants = {"t", "beta", "gamma", "gamma_prime", "s1", "s2", "kappa"}
    assert set(doc["test"]) >= constants | {"value", "threshold", "passed"}
    keys = {"status", "reason", "value", "omega", "Delta", "sigma", "interval", "interval_level"}
    assert set(doc["release"]) >= keys


@pytest.mark.slow
def test_cli_on_a_user_csv(tmp_path):
    path = tmp_path / "sample.csv"
    out = cli("synthetic", "--out", str(path), "--n", "30000", "--d", "3", "--sample-seed", "9")
    assert out["n"] == 30000
    doc = cli("release", "--data", str(path), "--coordinate", "x1", "--epsilon", "6", "--delta", "1e-6", "--seed", "1")
    check_document(doc)
    assert doc["coordinate"] == {"index": 1, "name": "x1"} and doc["n"] == 30000 and doc["d"] == 3
    assert doc["release"]["status"] == "released"
    r = doc["release"]
    assert r["interval"][0] < r["value"] < r["interval"][1]
    assert doc["budget"]["epsilon_basic"] == pytest.approx(6.0)
    # the same run through the library gives the same numbers
    from core.data import read_csv

    data = read_csv(path)
    p = prepare(data.X, data.y, feature_names=data.feature_names)
    run = run_private(p, 1, split_budget(6.0, 1e-6, RELEASE_SPLIT), make_rng(1), DEFAULT_CALIBRATION)
    assert r["value"] == run.release.value and doc["lambda_min"]["N"] == run.lambda_min.N
    assert doc["release"]["calibration"] == DEFAULT_CALIBRATION == "analytic"


def test_cli_synthetic_with_repeats():
    args = ["release", "--synthetic", "--n", "5000", "--d", "3", "--loss", "logistic", "--coordinate", "0",
            "--fallback", "off"]  # plain Algorithm 5
    doc = cli(*args, "--epsilon", "2", "--delta", "1e-6", "--seed", "3", "--repeat", "4", "--sample-seed", "1")
    check_document(doc)
    assert len(doc["trials"]) == 4
    assert doc["trials"][0]["lambda_min"] == doc["lambda_min"]
    assert len({t["lambda_min"]["N_hat"] for t in doc["trials"]}) == 4  # fresh noise in every trial
    assert len({t["lambda_min"]["N"] for t in doc["trials"]}) == 1  # one fit
    assert doc["release"]["status"] == "bottom" and doc["release"]["value"] is None
    assert "theta_star" in doc and "fit" in doc["not_private"]


def test_non_private_fields_are_marked(robust_problem):
    from core.privacy.marks import not_private

    run = run_private(robust_problem, 0, split_budget(6.0, 1e-6), make_rng(0))
    assert not_private(robust_problem.fit) >= {"theta", "hessian", "lambda_min", "lambda_max", "grad_norm", "kappa"}
    assert not_private(run.lambda_min) == {"N", "noise", "statistic"}
    assert not_private(run.release) == {"u_theta", "Delta", "omega", "multiplier", "oracle_interval", "z"}
    assert not_private(run.test) == set()  # a function of the certified bounds only
    assert {"value", "interval", "w_bar"}.isdisjoint(not_private(run.release))
    with pytest.raises(TypeError, match="expected a result dataclass"):
        not_private(3.0)
