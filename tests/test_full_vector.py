"""Full-vector releases (core.mechanisms.full_vector): Delta(P_n) of (3a), the baselines as vectors, the dispatcher."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from core.data import synthetic
from core.errors import InputError
from core.mechanisms.baselines import objective_perturbation, output_perturbation
from core.mechanisms.dp_sgd import DPSGDConfig, dp_sgd_theta
from core.mechanisms.full_vector import (
    VECTOR_METHODS,
    VectorRelease,
    cube_norm_sup,
    objective_perturbation_vector,
    oracle_vector,
    output_perturbation_vector,
    parameter_sensitivity,
    release_vector,
)
from core.mechanisms.pipeline import make_rng, prepare
from core.mechanisms.release import directional_sensitivity, unit_direction
from core.privacy.gaussian import sigma

DELTA = 1e-6


@pytest.fixture(scope="module")
def cube():
    """Robust regression, n = 20000, d = 5, on the cube: every method releases at eps >= 4."""
    data = synthetic(20_000, 5, "robust", theta_norm=1.0, seed=31)
    return prepare(data.X, data.y, "robust", "cube", feature_names=data.feature_names)


@pytest.fixture(scope="module")
def ball():
    """The same kind of data on the ball of radius 1.5 (rows rescaled onto it), with lam_reg = 0.03."""
    data = synthetic(20_000, 5, "robust", theta_norm=1.0, seed=32)
    return prepare(data.X, data.y, "robust", "ball", radius=1.5, lam_reg=0.03)


def random_spd(rng: np.random.Generator, d: int) -> np.ndarray:
    A = rng.standard_normal((d, d))
    return A @ A.T / d + 0.1 * np.eye(d)


def brute_cube_sup(M: np.ndarray) -> float:
    """max ||M s||_2 over all 2^d sign vectors, listed by itertools (no symmetry used)."""
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=M.shape[1])))
    return float(np.linalg.norm(signs @ M.T, axis=1).max())


def sensitivity_by_definition(fit, g) -> float:
    """(3a) on the cube: (1/n) max over g0, g1 in {-G0/sqrt(d), G0/sqrt(d)}^d of ||H_reg^{-1}(g0 - g1)||_2."""
    M = np.linalg.inv(fit.hessian + fit.lam_reg * np.eye(fit.d))
    corners = g.G0 / math.sqrt(g.d) * np.array(list(itertools.product((-1.0, 1.0), repeat=fit.d)))
    diffs = corners[:, None, :] - corners[None, :, :]
    return float(np.linalg.norm(diffs @ M.T, axis=2).max()) / fit.n


@pytest.mark.parametrize("d", [1, 2, 3, 6, 10, 17])
def test_cube_norm_sup_is_the_max_over_sign_vectors(d):
    """d = 17 spans two blocks of 2^15 sign vectors."""
    M = random_spd(np.random.default_rng(d), d)
    assert cube_norm_sup(M) == pytest.approx(brute_cube_sup(M), rel=1e-12)


def test_parameter_sensitivity_on_the_cube_is_3a(cube):
    """Against (3a) by definition, over all pairs of gradient-set vertices, for the fit and a random H."""
    f, g = cube.fit, cube.geometry
    assert parameter_sensitivity(f, g) == pytest.approx(sensitivity_by_definition(f, g), rel=1e-12)
    H = random_spd(np.random.default_rng(4), f.d)
    other = dataclasses.replace(f, hessian=H, lam_reg=0.05)
    assert parameter_sensitivity(other, g) == pytest.approx(sensitivity_by_definition(other, g), rel=1e-12)


def test_parameter_sensitivity_on_the_ball_is_2_G0_over_n_lambda(ball):
    f, g = ball.fit, ball.geometry
    assert g.G0 == g.loss.h1_sup * 1.5 and f.lam_reg == 0.03
    delta = parameter_sensitivity(f, g)
    assert delta == 2 * g.G0 / (f.n * (f.lambda_min + f.lam_reg))
    spectral = np.linalg.norm(np.linalg.inv(f.hessian + f.lam_reg * np.eye(f.d)), 2)
    assert delta == pytest.approx(2 * g.G0 / f.n * spectral, rel=1e-10)


def test_high_dimensional_bound_is_at_least_the_sup():
    """d > 20: diagonal M has sup ||M x|| = ||diag||_2 in closed form; d = 21 is checked by enumeration."""
    m = np.random.default_rng(5).uniform(0.1, 3.0, size=25)
    bound = cube_norm_sup(np.diag(m))
    assert bound >= float(np.linalg.norm(m)) and bound <= math.sqrt(25) * m.max() * (1 + 1e-12)
    M = random_spd(np.random.default_rng(6), 21)
    exact = cube_norm_sup(M, exact_max_d=21)
    assert cube_norm_sup(M) >= exact
    # the enumeration itself, against sign vectors built another way (bits of 0..2^21-1 in blocks)
    best = 0.0
    for block in np.array_split(np.arange(1 << 21, dtype=np.uint32), 16):
        bits = np.unpackbits(block.view(np.uint8).reshape(-1, 4), axis=1, bitorder="little")[:, :21]
        best = max(best, float(np.linalg.norm((1.0 - 2.0 * bits) @ M.T, axis=1).max()))
    assert exact == pytest.approx(best, rel=1e-12)


def test_parameter_sensitivity_above_20_dimensions_is_conservative():
    data = synthetic(4000, 22, "robust", seed=7)
    p = prepare(data.X, data.y, "robust", "cube")
    f, g = p.fit, p.geometry
    M = np.linalg.inv(f.hessian + f.lam_reg * np.eye(f.d))
    exact = 2.0 / f.n * g.G0 / math.sqrt(g.d) * cube_norm_sup(M, exact_max_d=22)
    assert parameter_sensitivity(f, g) >= exact


@pytest.mark.parametrize("domain", ["cube", "ball"])
def test_3a_dominates_3b_and_is_its_sup(domain, cube, ball):
    """Delta(P_n) >= Delta(P_n, u) for unit u, with equality at the maximising direction."""
    p = cube if domain == "cube" else ball
    f, g = p.fit, p.geometry
    delta = parameter_sensitivity(f, g)
    rng = np.random.default_rng(8)
    directions = [unit_direction(j, f.d) for j in range(f.d)] + [unit_direction(rng.standard_normal(f.d), f.d)
                                                                for _ in range(50)]
    assert all(directional_sensitivity(f, g, u) <= delta * (1 + 1e-12) for u in directions)
    M = np.linalg.inv(f.hessian + f.lam_reg * np.eye(f.d))
    if domain == "ball":
        best = np.linalg.eigh(M)[1][:, -1]  # top eigenvector of M
    else:
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=f.d)))
        best = M @ signs[np.argmax(np.linalg.norm(signs @ M.T, axis=1))]
    u = unit_direction(best, f.d)
    assert directional_sensitivity(f, g, u) == pytest.approx(delta, rel=1e-9)


def test_oracle_vector_covariance_is_delta_sigma_squared_identity(cube):
    """K = 4000 draws, standardised by Delta(P_n) sigma: second moments within 5 standard errors of I
    (sd sqrt(2/K) on the diagonal, 1/sqrt(K) off it) and means within 5/sqrt(K). Under the null each
    of these 20 checks fails with probability about 6e-7 (normal approximation), so about 1e-5 in all."""
    eps, K = 2.0, 4000
    f = cube.fit
    rng = make_rng(9)
    first = oracle_vector(cube, eps, DELTA, rng)
    assert first.method == "oracle" and not first.private and first.certified is None
    assert first.noise_scale == parameter_sensitivity(f, cube.geometry) * sigma(eps, DELTA)
    W = np.array([(oracle_vector(cube, eps, DELTA, rng).value - f.theta) / first.noise_scale for _ in range(K)])
    C = W.T @ W / K
    sd = np.full((f.d, f.d), 1 / math.sqrt(K)) + np.diag(np.full(f.d, math.sqrt(2 / K) - 1 / math.sqrt(K)))
    assert np.all(np.abs(C - np.eye(f.d)) < 5 * sd), C
    assert np.all(np.abs(W.mean(axis=0)) < 5 / math.sqrt(K))


def test_u_releases_are_projections_of_the_vectors(cube):
    eps = 2.0
    for j in range(cube.d):
        vec = output_perturbation_vector(cube, eps, DELTA, make_rng(40 + j))
        one = output_perturbation(cube, j, eps, DELTA, make_rng(40 + j))
        assert one.value == float(vec.value[j]) and one.noise_scale == vec.noise_scale
        assert one.lambda_reg == vec.lambda_reg == 1e-2
        vec = objective_perturbation_vector(cube, eps, DELTA, make_rng(50 + j))
        one = objective_perturbation(cube, j, eps, DELTA, make_rng(50 + j))
        assert one.value == float(vec.value[j]) and one.noise_scale == vec.noise_scale
        assert one.lambda_reg == vec.lambda_reg
    u = unit_direction(np.arange(1.0, cube.d + 1.0), cube.d)
    vec = objective_perturbation_vector(cube, eps, DELTA, make_rng(60))
    assert objective_perturbation(cube, u, eps, DELTA, make_rng(60)).value == float(u @ vec.value)


def test_objective_perturbation_values_are_unchanged(cube):
    """u^T values of (15) for seed 123, recorded before its formula moved into core.mechanisms.full_vector."""
    before = [-0.24904082460088103, 0.18735564079003264, 0.3922098111357451, -0.6830469667140595,
              0.5336962781811978]
    for j, value in enumerate(before):
        assert objective_perturbation(cube, j, 2.0, DELTA, make_rng(123)).value == pytest.approx(value, rel=1e-12)


def test_output_perturbation_vector_scale_and_centre(cube):
    """Noise sd is the u^T version's scale in every coordinate; the centre is theta_lam."""
    theta_lam = np.zeros(cube.d)  # any fixed centre: the draw is centre + scale Z
    a = output_perturbation_vector(cube, 2.0, DELTA, make_rng(3), theta_lam=theta_lam)
    z = make_rng(3).standard_normal(cube.d)
    np.testing.assert_array_equal(a.value, a.noise_scale * z)
    b = release_vector("output_perturbation", cube, 2.0, DELTA, make_rng(3), theta_lam=theta_lam)
    np.testing.assert_array_equal(b.value, a.value)
    with pytest.raises(InputError, match="lambda_reg > 0"):
        output_perturbation_vector(cube, 2.0, DELTA, make_rng(3), lam_reg=0.0)


def test_dp_sgd_vector_is_dp_sgd_theta(cube):
    cfg = DPSGDConfig(steps=100, accountant="rdp", neighbours="add_remove")
    out = release_vector("dp_sgd", cube, 2.0, DELTA, make_rng(11), dp_sgd_config=cfg)
    theta, z = dp_sgd_theta(cube, 2.0, DELTA, make_rng(11), cfg)
    np.testing.assert_array_equal(out.value, theta)
    assert out.noise_scale == z and out.private and out.lambda_reg == cube.fit.lam_reg


def mean_error(problem, method: str, eps: float, draws: int = 8) -> float:
    """Mean ||value - theta(P_n)||_2 over draws; a bottom counts as an infinite error."""
    errs = []
    for s in range(draws):
        r = release_vector(method, problem, eps, DELTA, make_rng(1000 + s))
        errs.append(math.inf if r.value is None else float(np.linalg.norm(r.value - problem.fit.theta)))
    return float(np.mean(errs))


@pytest.mark.parametrize("method", VECTOR_METHODS)
def test_error_shrinks_as_epsilon_grows(cube, method):
    """From eps = 1 to 16 every error falls by a quarter at least. Algorithm 7 is bottom at eps = 1 here,
    so for the methods whose error is all noise (scale ~ 1/eps) eps = 4 to 16 must halve it as well;
    output perturbation keeps theta_lam's bias and DP-SGD its batch noise, so they flatten out."""
    err = {eps: mean_error(cube, method, eps) for eps in (1.0, 4.0, 16.0)}
    assert math.isfinite(err[4.0]) and math.isfinite(err[16.0]), err
    assert err[16.0] < 0.75 * err[1.0], err
    if method not in ("output_perturbation", "dp_sgd"):
        assert err[16.0] < 0.5 * err[4.0], err


def test_release_vector_results_and_bottom(cube):
    for method in VECTOR_METHODS:
        cfg = DPSGDConfig(steps=50, accountant="rdp", neighbours="add_remove")
        r = release_vector(method, cube, 4.0, DELTA, make_rng(12), dp_sgd_config=cfg)
        assert isinstance(r, VectorRelease) and r.method == method and r.value.shape == (cube.d,)
        assert r.private is (method != "oracle") and (r.epsilon, r.delta) == (4.0, DELTA)
        assert (r.certified is not None) is (method in ("algorithm3", "algorithm7"))
    small = synthetic(400, 5, "robust", seed=2)
    p = prepare(small.X, small.y)
    r = release_vector("algorithm3", p, 1.0, DELTA, make_rng(3))
    assert r.value is None and r.noise_scale is None and r.certified.status == "bottom"
    assert r.reason == r.certified.reason


def test_release_vector_rejects_unknown_methods(cube):
    with pytest.raises(InputError, match="unknown method 'local'"):
        release_vector("local", cube, 1.0, DELTA, make_rng(0))
