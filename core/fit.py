"""The exact empirical minimiser theta(P_n) of problem (1) and its Hessian (stage 0, non-private).

theta(P_n) = argmin (1/n) sum_i h(<theta, x_i>, y_i) + (lam_reg/2) ||theta||^2, solved by Newton's
method with Armijo backtracking to ||gradient||_2 <= 1e-10 * max(1, objective). An optional linear
term b^T theta serves objective perturbation (15). The Hessian
H = (1/n) sum_i h''(<theta, x_i>, y_i) x_i x_i^T is reported WITHOUT lam_reg (SPEC section 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
from scipy.linalg.blas import dsyrk

from core.errors import DataError, NoMinimizerError
from core.losses import Loss
from core.marks import NOT_PRIVATE

Array = NDArray[np.float64]
GRAD_TOL = 1e-10
_CHUNK = 1 << 15  # rows per block of the weighted Gram: keeps the temporaries in cache


@dataclass(frozen=True)
class FitResult:
    """Stage 0: theta(P_n), the Hessian at it and its extreme eigenvalues. Nothing here is private.

    Attributes
    ----------
    theta : the minimiser theta(P_n) of (1).
    hessian : H = P_n h''(<theta, x>, y) x x^T, without lam_reg.
    eigenvalues : all eigenvalues of H, ascending.
    lambda_min, lambda_max : extreme eigenvalues of H.
    kappa : (lambda_max + lam_reg) / (lambda_min + lam_reg), the condition number of Theorem 2.
    grad_norm : ||gradient of (1)||_2 at theta, the solver's certificate of optimality.
    objective : value of (1) at theta.
    iterations : Newton steps taken.
    """

    theta: Array = field(metadata=NOT_PRIVATE)
    hessian: Array = field(metadata=NOT_PRIVATE)
    eigenvalues: Array = field(metadata=NOT_PRIVATE)
    lambda_min: float = field(metadata=NOT_PRIVATE)
    lambda_max: float = field(metadata=NOT_PRIVATE)
    kappa: float = field(metadata=NOT_PRIVATE)
    grad_norm: float = field(metadata=NOT_PRIVATE)
    objective: float = field(metadata=NOT_PRIVATE)
    iterations: int = field(metadata=NOT_PRIVATE)
    lam_reg: float
    n: int
    d: int


def weighted_gram(X: Array, w: Array) -> Array:
    """(1/n) X^T diag(w) X for w >= 0, by blocked symmetric rank-k updates (half of a GEMM's work)."""
    n, d = X.shape
    acc = np.zeros((d, d), order="F")
    for start in range(0, n, _CHUNK):
        block = X[start : start + _CHUNK] * np.sqrt(w[start : start + _CHUNK])[:, None]
        # block^T block via syrk on the transposed (Fortran-ordered) view, upper triangle only.
        acc = dsyrk(1.0, block.T, beta=1.0, c=acc, trans=0, lower=0, overwrite_c=1)
    upper = np.triu(acc)
    return (upper + np.triu(upper, 1).T) / n


def _check_rank(H0: Array, lam_reg: float) -> None:
    """Refuse a rank-deficient design: the Hessian at the start is X^T W X/n with W > 0."""
    vals, vecs = eigh(H0)
    if vals[0] > 1e-12 * max(vals[-1], np.finfo(float).tiny):
        return
    null = vecs[:, 0]
    cols = np.argsort(-np.abs(null))[: min(4, null.size)]
    involved = ", ".join(str(int(c)) for c in sorted(cols) if abs(null[c]) > 1e-6)
    raise DataError(
        "the design matrix is rank-deficient: some feature columns are linear combinations of "
        f"others (look at columns {involved}, 0-based); drop redundant columns (e.g. a full "
        "one-hot group next to an intercept) so every coefficient is identified"
        + ("" if lam_reg == 0 else "; regularisation alone cannot certify lambda_min > 0")
    )


def fit(
    X: Array,
    y: Array,
    loss: Loss,
    lam_reg: float = 0.0,
    linear: Array | None = None,
    max_iter: int = 100,
    tol: float = GRAD_TOL,
) -> FitResult:
    """Solve (1), plus linear^T theta when given, exactly by damped Newton.

    Raises NoMinimizerError when no minimiser exists. `X` must already lie in the declared domain
    and `y` be validated by `loss.labels`.
    """
    n, d = X.shape
    if not (np.isfinite(lam_reg) and lam_reg >= 0):
        raise DataError(f"lambda_reg must be a finite number >= 0, got {lam_reg}")
    b = np.zeros(d) if linear is None else np.asarray(linear, dtype=np.float64)
    theta = np.zeros(d)
    t = np.zeros(n)
    obj = float(np.mean(loss.value(t, y)))
    for it in range(max_iter + 1):
        w = loss.d2(t, y)
        grad = X.T @ loss.d1(t, y) / n + lam_reg * theta + b
        H = weighted_gram(X, w)
        if it == 0:
            _check_rank(H, lam_reg)
        grad_norm = float(np.linalg.norm(grad))
        if grad_norm <= tol * max(1.0, abs(obj)):
            if loss.name == "logistic" and lam_reg == 0 and linear is None and np.all(y * (X @ theta) > 0):
                # A strictly separating theta: the loss tends to 0 along it and has no minimiser.
                raise _no_minimizer(loss, lam_reg, "every training point is classified correctly")
            return _result(theta, H, lam_reg, grad_norm, obj, it, n, d)
        if it == max_iter:
            break
        H_reg = H + lam_reg * np.eye(d)
        try:
            step = -cho_solve(cho_factor(H_reg), grad)
        except LinAlgError:
            raise _no_minimizer(loss, lam_reg, "the Hessian became singular") from None
        theta, t, obj = _line_search(X, y, loss, lam_reg, b, theta, t, obj, grad, step)
        if np.max(np.abs(theta)) > 1e6:
            raise _no_minimizer(loss, lam_reg, "the coefficients diverge")
    raise _no_minimizer(loss, lam_reg, f"no convergence in {max_iter} Newton steps (gradient norm {grad_norm:.2e})")


def _line_search(
    X: Array, y: Array, loss: Loss, lam_reg: float, b: Array, theta: Array, t: Array, obj: float, grad: Array,
    step: Array,
) -> tuple[Array, Array, float]:
    """Armijo backtracking along the Newton direction; t = X theta is updated without a new matvec."""
    dt = X @ step
    slope = float(grad @ step)
    a = 1.0
    for _ in range(60):
        theta_new = theta + a * step
        t_new = t + a * dt
        obj_new = float(np.mean(loss.value(t_new, y))) + 0.5 * lam_reg * float(theta_new @ theta_new) + b @ theta_new
        if obj_new <= obj + 1e-4 * a * slope:
            return theta_new, t_new, obj_new
        a *= 0.5
    # At the floating-point floor of the objective no decrease is measurable: keep the Newton point.
    return theta + step, t + dt, obj


def _result(
    theta: Array, H: Array, lam_reg: float, grad_norm: float, obj: float, iterations: int, n: int, d: int
) -> FitResult:
    vals = eigh(H, eigvals_only=True)
    lmin, lmax = float(max(vals[0], 0.0)), float(vals[-1])
    return FitResult(
        theta=theta,
        hessian=H,
        eigenvalues=vals,
        lambda_min=lmin,
        lambda_max=lmax,
        kappa=(lmax + lam_reg) / (lmin + lam_reg) if lmin + lam_reg > 0 else float("inf"),
        grad_norm=grad_norm,
        objective=obj,
        iterations=iterations,
        lam_reg=float(lam_reg),
        n=n,
        d=d,
    )


def _no_minimizer(loss: Loss, lam_reg: float, why: str) -> NoMinimizerError:
    hint = (
        "the labels are (quasi-)separable by the features, so the logistic loss has no minimiser; "
        "set a positive lambda_reg (e.g. --lambda-reg 1e-3) or remove the separating feature"
        if loss.name == "logistic" and lam_reg == 0
        else "check the data for extreme or duplicated columns"
    )
    return NoMinimizerError(f"the fit did not reach a minimiser ({why}): {hint}")
