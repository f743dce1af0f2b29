"""The fit is exact for every input the domain admits, and neighbouring data sets end alike.

Each case here broke the guarantee before: one huge response stopped the fit far from the minimiser
(its stopping rule was relative to the objective), Newton stalled just above its tolerance on ordinary
samples, and data without a minimiser ended with an error that its neighbour did not.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from forking import in_forked_child
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data import synthetic
from core.errors import DataError
from core.estimator import kernels
from core.estimator.fit import MINIMISER, NO_MINIMISER, RANK_DEFICIENT, TAU_FACTOR, _dot2_columns, fit, mean_rows
from core.estimator.losses import LOGISTIC, ROBUST
from core.estimator.model import ModelSpec
from core.estimator.rounding import response_capacity
from core.mechanisms.full_vector import objective_perturbation_parameters, regularised_fit_theta
from core.mechanisms.pipeline import make_rng, prepare, prepare_model, run_private
from core.privacy.accounting import split_budget


def outlier_pair(n: int = 50_000, big: float = 1e16):
    """The robust sample of the report (theta* = (0.5, -0.5)) and its neighbour with one response `big`."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 2))
    y = X @ np.array([0.5, -0.5]) + rng.laplace(size=n)
    y_big = y.copy()
    y_big[0] = big
    return X, y, y_big


def true_gradient_norm(X, y, loss, theta, lam_reg=0.0):
    """||grad F|| recomputed independently, in exact (fsum) arithmetic over the rows."""
    g = loss.d1(X @ theta, y)
    grad = np.array([math.fsum(X[:, j] * g) for j in range(X.shape[1])]) / len(y) + lam_reg * theta
    return float(np.linalg.norm(grad))


@pytest.mark.parametrize("big", [1e13, 1e16, 1e300, -1e16])
def test_one_huge_response_leaves_the_fit_exact_and_the_release_stable(big):
    X, y, y_big = outlier_pair(big=big)
    p, q = prepare(X, y), prepare(X, y_big)
    for prob in (p, q):
        assert prob.fit.status == MINIMISER
        # absolute: ||grad|| <= tau = TAU_FACTOR * G0, whatever the objective
        assert true_gradient_norm(prob.X, prob.y, ROBUST, prob.fit.theta) <= TAU_FACTOR * prob.geometry.G0
    # One row moves the minimiser by at most the local sensitivity, far below today's gap (theta = 0).
    budget = split_budget(2.0, 1e-6)
    a = run_private(p, 0, budget, make_rng(1))
    b = run_private(q, 0, budget, make_rng(1))
    assert a.release.status == b.release.status == "released"
    Delta = max(a.release.Delta, b.release.Delta)
    assert abs(p.fit.theta[0] - q.fit.theta[0]) <= Delta
    assert abs(a.release.value - b.release.value) <= 3 * Delta
    lo, hi = b.release.interval
    assert hi - lo < 0.1  # a real interval around the real fit, not one around theta = 0
    assert abs(q.fit.theta[0] - 0.5) < 0.02


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([1.0, 1e2, 1e4]),
    st.lists(st.floats(-1e300, 1e300, allow_nan=False), min_size=0, max_size=3),
    st.sampled_from([0.0, 1e-3]),
)
def test_robust_fit_reaches_an_absolute_tolerance_on_any_responses(seed, scale, extremes, lam_reg):
    """Responses of any size (a few arbitrary extreme values, a model up to ||theta|| ~ 1e4): certified."""
    rng = np.random.default_rng(seed)
    n, d = 400, 3
    X = rng.uniform(-1, 1, (n, d))
    y = scale * (X @ rng.standard_normal(d)) + rng.laplace(size=n)
    y[: len(extremes)] = extremes
    f = fit(X, y, ROBUST, lam_reg, radius=math.sqrt(d))
    assert f.status == MINIMISER
    assert true_gradient_norm(X, y, ROBUST, f.theta, lam_reg) <= TAU_FACTOR * math.sqrt(d)


@pytest.mark.parametrize("theta_norm,seed,lam", [(5.0, 0, None), (5.0, 13, None), (5.0, 23, None), (3.0, 25, None),
                                                 (5.0, 13, 1e-2), (5.0, 23, 1e-2), (3.0, 25, 1e-2)])
def test_no_newton_stall_on_the_reported_samples(theta_norm, seed, lam):
    """The samples on which Newton stalled at ||grad|| ~ 5e-10 (objective and output perturbation fits)."""
    data = synthetic(200_000, 5, "robust", theta_norm, 1.0, seed)
    p = prepare(data.X, data.y)
    rng = make_rng(1)
    if lam is None:  # objective perturbation's fit with its own lambda_reg and linear term
        lam_op, s = objective_perturbation_parameters(p, 4.0, 1e-6)
        for _ in range(5):
            b = s * rng.standard_normal(p.d)
            theta = regularised_fit_theta(p, lam_op, linear=b)
            g = mean_rows(p.X, ROBUST.d1(p.X @ theta, p.y)) + lam_op * theta + b
            assert np.linalg.norm(g) <= TAU_FACTOR * p.geometry.G0
    else:
        theta = regularised_fit_theta(p, lam)
        assert true_gradient_norm(p.X, p.y, ROBUST, theta, lam) <= TAU_FACTOR * p.geometry.G0


def test_the_compare_reproducer_exits_cleanly():
    out = subprocess.run(
        [sys.executable, "-m", "core", "compare", "--synthetic", "--n", "200000", "--d", "5", "--theta-norm", "5",
         "--sample-seed", "13", "--coordinate", "0", "--epsilon", "4", "--delta", "1e-6", "--trials", "2", "--seed",
         "1", "--methods", "local,oracle,output_perturbation"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr


# ----------------------------------------------------------------- data without a minimiser


def separable_pair(n: int = 5_000):
    """Logistic labels separable by the line x0 = 0, and the neighbour with one label flipped."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (n, 2))
    X[:, 0] = np.where(np.abs(X[:, 0]) < 1e-3, 0.5, X[:, 0])  # nobody on the line
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    flipped = y.copy()
    flipped[0] = -flipped[0]
    return X, y, flipped


def test_separable_labels_have_no_minimiser_and_neighbours_end_alike():
    X, y, flipped = separable_pair()
    p, q = prepare(X, y, "logistic"), prepare(X, flipped, "logistic")
    assert p.fit.status == NO_MINIMISER and p.fit.lambda_min == 0.0
    assert "separable" in p.fit.diagnosis  # the teaching diagnosis says why
    budget = split_budget(2.0, 1e-6)
    for seed in range(20):
        a, b = run_private(p, 0, budget, make_rng(seed)), run_private(q, 0, budget, make_rng(seed))
        assert a.release.status == b.release.status == "bottom"
        assert a.lambda_min.lambda_hat == b.lambda_min.lambda_hat == 0.0


def test_a_certificate_failure_on_data_without_a_minimiser_still_ends_in_bottom():
    """Stage 1's failure event (probability delta_a): lambda_hat_min > 0 although lambda_min := 0."""
    X, y, _ = separable_pair()
    p = prepare(X, y, "logistic")
    budget = split_budget(2.0, 0.9)  # a huge delta makes the failure event frequent
    runs = [run_private(p, 0, budget, make_rng(s)) for s in range(400)]
    failed = [r for r in runs if r.lambda_min.lambda_hat > 0]
    assert failed, "the failure event must occur at this delta"
    assert all(r.release.status == "bottom" and r.release.value is None for r in runs)


def test_rank_deficient_design_is_a_bottom_not_an_error():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 2))
    X = np.column_stack([X, 0.5 * (X[:, 0] - X[:, 1])])
    y = X[:, :2] @ np.array([0.5, -0.5]) + rng.laplace(size=400)
    p = prepare(X, y)
    assert p.fit.status == RANK_DEFICIENT and p.fit.lambda_min == 0.0
    assert "rank-deficient" in p.fit.diagnosis and "columns 0, 1, 2" in p.fit.diagnosis
    assert run_private(p, 0, split_budget(4.0, 1e-6), make_rng(0)).release.status == "bottom"
    # with a ridge the minimiser is unique, and lambda_min(H) = 0 still ends in bottom
    r = prepare(X, y, lam_reg=1e-2)
    assert r.fit.status == MINIMISER and r.fit.lambda_min < 1e-12
    assert run_private(r, 0, split_budget(4.0, 1e-6), make_rng(0)).release.status == "bottom"


def cli_release(path, *extra):
    args = [sys.executable, "-m", "core", "release", "--data", str(path), "--coordinate", "0", "--epsilon", "2",
            "--delta", "1e-6", "--seed", "1", *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def write_csv(path, X, y):
    names = [f"x{j}" for j in range(X.shape[1])]
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=",".join([*names, "y"]), comments="",
               fmt="%.17g")
    return path


@pytest.mark.slow
def test_command_line_neighbours_end_with_the_same_status_and_kind(tmp_path):
    """Separable and one-flipped data: exit 0 and bottom for both under plain Algorithm 5, the same kind of outcome
    under the default fallback; no label is quoted anywhere."""
    X, y, flipped = separable_pair()
    paths = [write_csv(tmp_path / f"{k}.csv", X, v) for k, v in (("sep", y), ("flip", flipped))]
    for fallback, statuses in (("off", {"bottom"}), ("auto", None)):
        docs = []
        for path in paths:
            out = cli_release(path, "--loss", "logistic", "--fallback", fallback)
            assert out.returncode == 0, out.stderr
            assert out.stderr == ""
            docs.append(json.loads(out.stdout))
        found = {d["release"]["status"] for d in docs}
        assert len(found) == 1 and (statuses is None or found == statuses)
        assert docs[0]["fit"]["status"] == NO_MINIMISER and "fit" in docs[0]["not_private"]


def test_logistic_fit_certifies_against_an_independent_solver():
    """On a flipped-label neighbour the minimiser exists with a huge coefficient: certified, not refused."""
    X, _, flipped = separable_pair()
    f = fit(X, flipped, LOGISTIC, radius=math.sqrt(2))
    assert f.status == MINIMISER and f.theta[0] > 20
    assert true_gradient_norm(X, flipped, LOGISTIC, f.theta) <= TAU_FACTOR * math.sqrt(2)
    assert f.distance < 1e-6


@pytest.mark.parametrize("scale", [1e7, 1e10, 1e12])
def test_coefficients_far_beyond_double_precision_are_certified(scale):
    """||theta|| up to 1e12 on the unit cube: the plain residual x^T theta - y would round by ~1e-4, Dot2 does not;
    the certified point (theta + theta_lo) has a true gradient norm below tau (exact rational arithmetic). Adding
    X c to y moves the minimiser by c and leaves every residual, so the Hessian, the counts and the outcome are
    those of the unshifted data, and the release moves by u^T c (same seed)."""
    rng = np.random.default_rng(0)
    n = 20_000
    X = rng.uniform(-1, 1, (n, 3))
    base = X @ np.array([1.0, -0.5, 0.25]) + rng.laplace(size=n)
    c = scale * rng.standard_normal(3)
    p, q = prepare(X, base), prepare(X, base + X @ c)
    assert q.fit.status == MINIMISER and q.clipped_responses == 0
    assert exact_gradient_norm(q.X, q.y, q.fit.theta, q.fit.theta_lo) <= TAU_FACTOR * q.geometry.G0
    # y itself is rounded to float64: the residuals differ by about 2^-53 |y|, no more.
    assert q.fit.lambda_min == pytest.approx(p.fit.lambda_min, abs=1e-15 * scale)
    budget = split_budget(8.0, 1e-6)
    a, b = run_private(p, 0, budget, make_rng(3)), run_private(q, 0, budget, make_rng(3))
    assert a.lambda_min.N == b.lambda_min.N and a.release.status == b.release.status == "released"
    assert b.release.value - a.release.value == pytest.approx(c[0], abs=1e-14 * scale + a.release.Delta)


def exact_gradient_norm(X, y, hi, lo):
    """||grad F(hi + lo)|| for the robust loss, the residuals in rational arithmetic (tanh of each in float64)."""
    theta = [Fraction(float(a)) + Fraction(float(b)) for a, b in zip(hi, lo, strict=True)]
    z = np.array([float(sum((Fraction(float(x)) * t for x, t in zip(row, theta, strict=True)), Fraction(0))
                        - Fraction(float(v))) for row, v in zip(X, y, strict=True)])
    return float(np.linalg.norm(X.T @ np.tanh(0.5 * z) / len(y)))


def test_a_response_bound_beyond_what_the_fit_certifies_is_refused_before_the_fit():
    """A public fact (n, d and the declared bound), not the data, decides the refusal; the message names the
    setting. Within the bound, responses beyond it are clipped and counted."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (20_000, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + rng.laplace(size=20_000)
    capacity = response_capacity(20_000, 3, ROBUST)
    with pytest.raises(DataError, match="--response-bound") as err:
        prepare_model(X, y, ModelSpec("robust", response_bound=2 * capacity))
    assert err.value.setting == "response_bound"
    y[:7] = 1e15
    p = prepare_model(X, y, ModelSpec("robust", response_bound=100.0))
    assert p.clipped_responses == 7 and p.response_bound == 100.0 and float(p.y.max()) == 100.0
    assert prepare(X, y).response_bound == capacity


@pytest.mark.slow
def test_a_seeded_command_line_run_records_its_seed(tmp_path):
    X, y, _ = outlier_pair(n=2_000)
    path = write_csv(tmp_path / "d.csv", X, y)
    seeded = json.loads(cli_release(path).stdout)
    assert seeded["noise"] == {"seed": 1, "source": "seed", "private": False, "warning": seeded["noise"]["warning"]}
    assert "NOT a private release" in seeded["noise"]["warning"]
    args = [sys.executable, "-m", "core", "release", "--data", str(path), "--coordinate", "0", "--epsilon", "2",
            "--delta", "1e-6"]
    fresh = json.loads(subprocess.run(args, capture_output=True, text=True, timeout=120).stdout)
    assert fresh["noise"] == {"seed": None, "source": "os_entropy", "private": True, "warning": None}


def test_compare_on_data_without_a_minimiser_says_why(tmp_path):
    """Comparisons are measured against the (non-private) fit: without one they end in one clear line."""
    X, y, _ = separable_pair(n=1_000)
    path = write_csv(tmp_path / "sep.csv", X, y)
    out = subprocess.run(
        [sys.executable, "-m", "core", "compare", "--data", str(path), "--loss", "logistic", "--coordinate", "0",
         "--epsilon", "2", "--delta", "1e-6", "--trials", "2"], capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "no minimiser" in out.stderr and "separable" in out.stderr


def test_logistic_newton_starts_from_the_gram_without_another_pass(monkeypatch):
    """At theta = 0 every logistic weight is 1/4, so the first Hessian is 1/4 of the rank check's Gram: the same
    bits as forming it again (scaling by a power of two is exact), one pass over X fewer, the same fit."""
    import core.estimator.fit as fitting

    d = synthetic(30_000, 5, "logistic", seed=4)
    X = d.X
    assert np.array_equal(fitting.weighted_gram(X, np.full(len(X), 0.25)),
                          0.25 * fitting.weighted_gram(X, np.ones(len(X))))
    flags = []
    evaluate = fitting._evaluate_block
    monkeypatch.setattr(fitting, "_evaluate_block", lambda res, hi, lo, hessian, step, *a: flags.append(
        (hessian, bool(hi.any() or lo.any()))) or evaluate(res, hi, lo, hessian, step, *a))
    short = fit(X, d.y, LOGISTIC)
    assert flags[0] == (False, False) and all(moved for _, moved in flags[1:])  # at 0, the Gram's quarter only
    monkeypatch.setattr(fitting, "_evaluate_block", evaluate)
    full = fit(X, d.y, LOGISTIC, start=np.full(X.shape[1], 1e-300))  # a start off 0 forms every Hessian in a pass
    assert short.status == full.status == MINIMISER
    np.testing.assert_allclose(short.theta, full.theta, rtol=1e-12)


@pytest.mark.parametrize("n", [5, 1_000, 70_001])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_compiled_gram_is_the_blas_gram_up_to_rounding(monkeypatch, n, weighted):
    """The compiled Gram (8 fixed row ranges) against the BLAS blocks: the same sum in another order, so within
    a sum's rounding bound of each other (n 2^-52 max_i w_i ||x_i||^2, over n: 17 2^-52 here); symmetric, and
    the same bits however many workers run the ranges."""
    import core.estimator.fit as fitting

    if fitting.kernels() is None:
        pytest.skip("the compiled loops are off (no numba or PSP_NO_JIT=1)")
    monkeypatch.setattr(fitting, "COMPILED_GRAM_ROWS", 0)  # compiled at every n here
    rng = np.random.default_rng(n)
    X = rng.uniform(-1, 1, (n, 17))
    X[: n // 2, 0] = 1.0  # an intercept-like column and exact zeros, as in a one-hot design
    X[:, 3] = (X[:, 3] > 0).astype(float)
    w = rng.uniform(0, 0.25, n) if weighted else None
    fast, slow = fitting.weighted_gram(X, w), (lambda u: (u + np.triu(u, 1).T) / n)(fitting._blas_gram(X, w))
    assert np.array_equal(fast, fast.T)
    assert np.max(np.abs(fast - slow)) <= 17 * 2.0**-52
    assert np.max(np.abs(fast - slow)) > 0 or n < 1_000  # really two different sums
    with ThreadPoolExecutor(max_workers=1) as one:
        original = fitting._threads
        fitting._threads = lambda pid: one
        try:
            serial = fitting.weighted_gram(X, w)
        finally:
            fitting._threads = original
    assert np.array_equal(serial, fast)


@pytest.mark.parametrize("loss", [ROBUST, LOGISTIC])
def test_the_hessian_weights_from_the_gradient_weights(loss):
    """h'' = d2_of_d1(h') is an identity of each loss: checked against h'' itself on a grid of margins up to
    |t - y| = 800 (both tails, where h'' underflows), to 2^-52 absolutely (h'' <= 1/2), and to 1e-9 relatively
    wherever h'' > 1e-6 (the absolute error over h'')."""
    tails = np.geomspace(1e-12, 800, 2_000)
    t = np.concatenate([np.linspace(-40, 40, 40_001), tails, -tails])
    for label in ([-1.0, 1.0] if loss is LOGISTIC else [0.0, 3.5, -2.25]):
        y = np.full_like(t, label)
        got, want = loss.d2_of_d1(loss.d1(t, y)), loss.d2(t, y)
        assert np.max(np.abs(got - want)) <= 2.0**-52
        bulk = want > 1e-6
        assert np.max(np.abs(got[bulk] - want[bulk]) / want[bulk]) <= 1e-9


def test_the_line_search_hands_on_exactly_what_the_next_step_would_form(monkeypatch):
    """A full Newton step's slope is formed at X (theta + step), and the next gradient reuses it: the same bits
    as a fit that forms it again (theta, the eigenvalues, the steps), on a logistic and a robust sample."""
    import core.estimator.fit as fitting

    cases = [(synthetic(20_000, 6, "logistic", seed=2), LOGISTIC), (synthetic(20_000, 4, "robust", seed=3), ROBUST)]
    searched, handed = fitting._line_search, []

    def counted(*args):
        a, ahead = searched(*args)
        handed.append(ahead is not None)
        return a, ahead

    monkeypatch.setattr(fitting, "_line_search", counted)
    reused = [fit(d.X, d.y, loss) for d, loss in cases]
    assert sum(handed) >= 3  # the full step was taken, and its t and h' handed on, at least three times
    monkeypatch.setattr(fitting, "_line_search", lambda *a: (searched(*a)[0], None))
    for (d, loss), a in zip(cases, reused, strict=True):
        b = fit(d.X, d.y, loss)
        assert a.status == b.status == MINIMISER and a.iterations == b.iterations >= 3
        assert np.array_equal(a.theta, b.theta) and np.array_equal(a.eigenvalues, b.eigenvalues)


def test_the_fit_without_compiled_kernels_agrees(monkeypatch):
    """PSP_NO_JIT=1 (the BLAS Gram) in a fresh process against the compiled Gram here: the same status and steps,
    theta and the eigenvalues equal up to the Gram's rounding."""
    import core.estimator.fit as fitting

    if fitting.kernels() is None:
        pytest.skip("the compiled loops are off (no numba or PSP_NO_JIT=1)")
    monkeypatch.setattr(fitting, "COMPILED_GRAM_ROWS", 0)  # compiled at every n here
    script = ("import json; from core.data import synthetic; from core.estimator.fit import fit;"
              "from core.estimator.losses import LOGISTIC; d = synthetic(30_000, 5, 'logistic', seed=7);"
              "f = fit(d.X, d.y, LOGISTIC);"
              "print(json.dumps([f.status, f.iterations, f.theta.tolist(), f.eigenvalues.tolist()]))")
    env = {**os.environ, "PSP_NO_JIT": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    status, iterations, theta, eigenvalues = json.loads(out.stdout)
    d = synthetic(30_000, 5, "logistic", seed=7)
    here = fit(d.X, d.y, LOGISTIC)
    assert (status, iterations) == (here.status, here.iterations) and status == MINIMISER
    np.testing.assert_allclose(theta, here.theta, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(eigenvalues, here.eigenvalues, rtol=1e-12)
    assert not np.array_equal(eigenvalues, here.eigenvalues)  # the two paths really ran


def test_a_forked_child_forms_the_gram_with_threads_of_its_own(monkeypatch):
    """A child forked after the parent formed a Gram (fork keeps no threads) forms the same Gram, instead of
    waiting forever on its parent's pool."""
    import core.estimator.fit as fitting

    if fitting.kernels() is None:
        pytest.skip("without the compiled loops the Gram runs on the calling thread")
    monkeypatch.setattr(fitting, "COMPILED_GRAM_ROWS", 0)  # compiled at every n here
    X = np.random.default_rng(0).uniform(-1, 1, (5_000, 4))
    parent = fitting.weighted_gram(X)
    in_forked_child(lambda: np.array_equal(fitting.weighted_gram(X), parent), 30,
                    "the forked child did not finish its Gram in 30 s")


def test_compiled_and_numpy_residuals_are_the_same_bits_and_exact_to_twice_the_precision():
    """Dot2 compiled (core.estimator.kernels.residual_rows) and column by column in NumPy: identical bits, and within
    2^-53 |z| of the exact residual computed in rational arithmetic, on coefficients of 1e12."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (1_000, 7))
    hi = 1e12 * rng.standard_normal(7)
    lo = hi * 2.0**-60 * rng.standard_normal(7)
    y = X @ hi + rng.laplace(size=1_000)
    for centred in (True, False):
        compiled = np.empty(1_000)
        kernels.residual_rows(X, y, hi, lo, centred, 0, 1_000, compiled)
        assert np.array_equal(compiled, _dot2_columns(X, y, hi, lo, centred))
        for i in range(0, 1_000, 97):
            exact = sum((Fraction(float(x)) * (Fraction(float(h)) + Fraction(float(low)))
                         for x, h, low in zip(X[i], hi, lo, strict=True)), Fraction(0))
            exact -= Fraction(float(y[i])) if centred else 0
            assert abs(Fraction(float(compiled[i])) - exact) <= 2.0**-52 * abs(exact) + Fraction(1, 10**15)


@pytest.mark.parametrize("n", [1_000, 249_999])
def test_below_the_compiled_rows_the_gram_is_blas_s_whether_the_kernels_are_built_or_not(n):
    """The Gram's route is chosen by n, a public fact: below COMPILED_GRAM_ROWS it is BLAS's blocks bit for bit, so
    a fit there has the same bits before and after a background build of the kernels."""
    import core.estimator.fit as fitting

    assert fitting.COMPILED_GRAM_ROWS == 250_000
    X = np.random.default_rng(n).uniform(-1, 1, (n, 5))
    blas = fitting._blas_gram(X, None)
    assert np.array_equal(fitting.weighted_gram(X), (blas + np.triu(blas, 1).T) / n)
