"""The comparison methods and the privacy totals: parameters equal docs/method.md §8's formulas, errors match scales."""

import math

import numpy as np
import pytest

from core.data import synthetic
from core.mechanisms.baselines import (
    fallback_budget,
    objective_perturbation,
    oracle,
    output_perturbation,
)
from core.mechanisms.full_vector import objective_perturbation_parameters, regularised_fit_theta
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.release import directional_sensitivity, unit_direction
from core.mechanisms.stability import solver_slack
from core.methods.local_fallback import local_with_fallback
from core.privacy.accounting import (
    StageBudget,
    basic_composition,
    pld_epsilon,
    release_event_delta,
    split_budget,
    split_budget_pld,
)
from core.privacy.gaussian import sigma


@pytest.fixture(scope="module")
def big():
    """n = 200000, d = 5: every private method releases and its noise dominates its error."""
    data = synthetic(200_000, 5, "robust", theta_norm=2.0, seed=21)
    return prepare(data.X, data.y, feature_names=data.feature_names)


def test_objective_perturbation_parameters_are_spec_formulas(big):
    eps, delta = 2.0, 1e-6
    lam, s = objective_perturbation_parameters(big, eps, delta)
    g, n = big.geometry, big.n
    assert lam == pytest.approx(4 * g.G1 / (n * eps), rel=1e-15)
    a = 2 * math.log(4 / delta)
    assert s == pytest.approx(2 * g.r / (n * eps) * (math.sqrt(a) + math.sqrt(a + 2 * eps)), rel=1e-15)
    assert objective_perturbation(big, 0, eps, delta, make_rng(1)).noise_scale == s


def test_output_perturbation_and_oracle_scales(big):
    eps, delta = 2.0, 1e-6
    out = output_perturbation(big, 1, eps, delta, make_rng(1), lam_reg=0.05)
    # 2 G0/(n lam), plus the tolerance of the two regularised fits
    sens = 2 * big.geometry.G0 / (big.n * 0.05) + 2 * solver_slack(0.05, big.geometry)
    assert out.noise_scale == pytest.approx(sens * sigma(eps, delta), rel=1e-15)
    assert out.private and out.lambda_reg == 0.05
    orc = oracle(big, 1, eps, delta, make_rng(1))
    u = unit_direction(1, big.d)
    assert orc.noise_scale == pytest.approx(directional_sensitivity(big.fit, big.geometry, u) * sigma(eps, delta))
    assert not orc.private


def test_each_method_errs_within_a_few_of_its_noise_scale(big):
    eps, delta, j, draws = 4.0, 1e-6, 2, 40
    rng = make_rng(5)
    u = unit_direction(j, big.d)
    target = big.fit.theta[j]
    local = [run_private(big, j, split_budget(eps, delta), rng).release for _ in range(draws)]
    assert all(r.status == "released" for r in local)
    z = np.array([(r.value - target) / (r.sigma * r.omega) for r in local])
    assert np.abs(z).max() < 4.5 and 0.5 < z.std() < 1.5
    theta_lam = regularised_fit_theta(big, 1e-2)
    out = [output_perturbation(big, j, eps, delta, rng, theta_lam=theta_lam) for _ in range(draws)]
    z = np.array([(o.value - theta_lam[j]) / o.noise_scale for o in out])
    assert np.abs(z).max() < 4.5 and 0.5 < z.std() < 1.5
    lam, s = objective_perturbation_parameters(big, eps, delta)
    H = big.fit.hessian + lam * np.eye(big.d)
    theta_op = regularised_fit_theta(big, lam)  # b = 0: the method's centre
    predicted = s * np.linalg.norm(np.linalg.solve(H, u))  # b enters theta as -H^{-1} b to first order
    op = [objective_perturbation(big, j, eps, delta, rng).value for _ in range(draws)]
    z = (np.array(op) - theta_op[j]) / predicted
    assert np.abs(z).max() < 4.5 and 0.5 < z.std() < 1.5
    orc = [oracle(big, j, eps, delta, rng) for _ in range(draws)]
    z = np.array([(o.value - target) / o.noise_scale for o in orc])
    assert np.abs(z).max() < 4.5


def test_fallback_spends_what_the_later_stages_would_have():
    b = split_budget(4.0, 1e-6)
    eps, dlt = fallback_budget(b)
    assert eps == pytest.approx(b.lambda_max.epsilon + 2 * b.release.epsilon)
    assert dlt == pytest.approx(b.lambda_max.delta + (1 + math.exp(b.release.epsilon)) * b.release.delta)
    # stage 1 plus the fallback stays within the stated total
    assert b.lambda_min.epsilon + eps <= b.epsilon_total + 1e-12
    assert b.lambda_min.delta + dlt <= b.delta_total
    small = synthetic(400, 5, "robust", seed=2)
    p = prepare(small.X, small.y)
    run, op = local_with_fallback(p, 0, b, make_rng(3))
    assert run.lambda_min.lambda_hat == 0 and op is not None and op.value is not None
    assert op.epsilon == eps and op.delta == dlt


def test_pld_total_against_basic_composition():
    b = split_budget(4.0, 1e-6)
    assert b.epsilon_pld <= b.epsilon_basic
    # at a practical delta the accountant gains nothing in epsilon: only its grid separates them
    raw = pld_epsilon(b.lambda_min, b.lambda_max, b.release, b.delta_total)
    assert abs(raw - b.epsilon_basic) < 3e-4
    big_delta = split_budget(4.0, 0.1)
    assert big_delta.epsilon_pld < big_delta.epsilon_basic - 0.2
    a, c = StageBudget(1.0, 1e-7), StageBudget(0.5, 1e-7)
    assert pld_epsilon(a, a, c, 2e-7 + release_event_delta(c)) == math.inf  # no delta left to convert


@pytest.mark.parametrize("eps,delta", [(4.0, 1e-6), (1.0, 1e-5)])
def test_pld_split_meets_its_target(eps, delta):
    p = split_budget_pld(eps, delta)
    assert p.accounting == "pld"
    assert p.epsilon_pld <= eps and p.epsilon_pld > eps * (1 - 1e-4)
    a, b, c = p.lambda_min, p.lambda_max, p.release
    assert a.delta + b.delta + 2 * release_event_delta(c) == pytest.approx(delta, rel=1e-12)
    basic = split_budget(eps, delta)
    gain = math.exp(basic.lambda_min.epsilon + basic.lambda_max.epsilon)  # no e^(eps_a + eps_b) factor
    assert a.delta == pytest.approx(gain * basic.lambda_min.delta, rel=1e-12)
    assert basic_composition(a, b, c)[1] > delta  # under basic composition these stages would overspend


def run_compare(*args):
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "core", "compare", *args], capture_output=True, text=True, timeout=600)
    return proc, (json.loads(proc.stdout) if proc.returncode == 0 else None)


@pytest.mark.slow
def test_the_reported_newton_stall_no_longer_aborts_a_comparison():
    """The reproducer of the stall (Armijo accepting rounding-noise steps just above the tolerance) exits 0 and
    names every method it was asked for."""
    proc, doc = run_compare("--synthetic", "--n", "200000", "--d", "5", "--theta-norm", "5", "--sample-seed", "0",
                            "--coordinate", "0", "--epsilon", "4", "--delta", "1e-6", "--trials", "2", "--seed", "1",
                            "--methods", "local,oracle,output_perturbation")
    assert proc.returncode == 0, proc.stderr
    assert set(doc["methods"]) == {"local", "oracle", "output_perturbation"}


@pytest.mark.slow
def test_compare_command_runs_every_method_at_one_budget():
    proc, doc = run_compare("--synthetic", "--n", "50000", "--d", "4", "--sample-seed", "2", "--coordinate", "x1",
                            "--epsilon", "4", "--delta", "1e-6", "--trials", "3", "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    assert set(doc["methods"]) == {"local", "oracle", "output_perturbation", "objective_perturbation", "dp_sgd"}
    assert set(doc["full_vector"]) == {"algorithm3", "algorithm7"}
    for name, m in doc["methods"].items():
        assert len(m["values"]) == 3 and (m["epsilon"], m["delta"]) == (4.0, 1e-6)
        assert m["private"] is (name != "oracle")
        assert {"vs_fit", "vs_truth"} <= set(m["errors"])
    assert doc["methods"]["output_perturbation"]["lambda_reg"] == 1e-2
    assert doc["methods"]["objective_perturbation"]["lambda_reg"] == pytest.approx(4 * 4 * 0.5 / (50000 * 4))
    assert set(doc["accounting"]) >= {"epsilon_basic", "delta_basic", "epsilon_pld"}
    assert doc["targets"]["u_theta_star"] is not None


def test_compare_command_rejects_unknown_methods():
    proc, _ = run_compare("--synthetic", "--n", "2000", "--coordinate", "0", "--epsilon", "1", "--delta", "1e-6",
                          "--methods", "local,magic")
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0
    assert "unknown method(s) magic" in proc.stderr
