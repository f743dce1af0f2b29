"""The exact empirical minimiser theta(P_n) of problem (1) and its Hessian (stage 0, non-private).

theta(P_n) = argmin F(theta), F(theta) = (1/n) sum_i h(<theta, x_i>, y_i) + (lam_reg/2) ||theta||^2
(+ b^T theta for objective perturbation (15)). The Hessian H = (1/n) sum_i h''(<theta, x_i>, y_i) x_i x_i^T
is reported WITHOUT lam_reg (SPEC section 1).

How the fit stays exact for every input the domain admits:
- Stopping rule in absolute terms. The gradient is an average of terms x_i h'(.) of norm <= G0 = sup|h'| r,
  so the solver stops at ||grad F|| <= GRAD_TOL * G0 whatever the responses; a response of 1e16 makes the
  objective 1e11 but leaves every gradient term bounded.
- No objective values. The line search works on the directional derivative psi'(a) = grad F(theta + a p)^T p,
  which is exact to rounding however large a residual is, and psi' is nondecreasing (F is convex).
- t = X theta is recomputed at every step (no drift) and the gradient is summed in blocks of SUM_BLOCK rows
  with an exact sum of the block sums, so its rounding error is at most ~SUM_BLOCK * 2^-53 * G0.
- A certificate of existence. Both losses satisfy h''(t + s) >= e^(-|s|) h''(t), so along any ray from
  theta~ the directional derivative of F grows at least like mu (1 - e^(-r l))/r, mu = lambda_min(H(theta~))
  + lam_reg. With ||grad F(theta~)|| <= tau and q = r tau / mu < 1, F increases on every ray beyond
  l = -ln(1 - q)/r: a minimiser exists and ||theta~ - theta(P_n)|| <= l. Without that certificate the
  result says there is no (certified) minimiser, and the private stages treat lambda_min as 0.
Data-dependent failures (rank deficiency, separable labels, no convergence) are results, not exceptions:
a private run must end alike on neighbouring data (docs/privacy.md, "Data with no minimiser").
"""

from __future__ import annotations

import functools
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
from scipy.linalg.blas import dsyrk
from scipy.optimize import linprog

from core.errors import DataError, NoMinimizerError
from core.losses import Loss
from core.marks import NOT_PRIVATE
from core.recursion import KERNELS

Array = NDArray[np.float64]
GRAD_TOL = 1e-12  # the solver's target: ||grad F|| <= GRAD_TOL * G0 (computed)
TAU_FACTOR = 2e-12  # the certified bound tau = TAU_FACTOR * G0 allows for the rounding of the computed gradient
SUM_BLOCK = 4096  # rows per block of the gradient sum: rounding <= 4096 * 2^-53 ~ 4.6e-13 relative to G0
MAX_ITER = 200
STALL_STEPS = 12  # Newton steps without halving the gradient norm: the rounding floor was reached
MINIMISER, RANK_DEFICIENT, NO_MINIMISER = "minimiser", "rank_deficient", "no_minimiser"
_CHUNK = 1 << 15  # rows per block of the BLAS Gram: keeps the temporaries in cache
GRAM_PARTS = 8  # row ranges of the compiled Gram, each summed on its own, then in order
_SEPARATION_CHECK_NORM = 30.0  # a logistic ||theta||_2 past this triggers the exact separation check


@dataclass(frozen=True)
class FitResult:
    """Stage 0: theta(P_n), the Hessian at it and its extreme eigenvalues. Nothing here is private.

    Attributes
    ----------
    status : "minimiser" (certified), "rank_deficient" (lam_reg = 0 and the design has a null direction)
        or "no_minimiser" (none exists, e.g. separable logistic labels, or none could be certified).
        For the last two, lambda_min is defined as 0 and theta, the Hessian and lambda_max are NaN.
    diagnosis : why, in words, for teaching views.
    theta : the minimiser theta(P_n) of (1) (to within `distance`).
    hessian : H = P_n h''(<theta, x>, y) x x^T, without lam_reg.
    eigenvalues : all eigenvalues of H, ascending.
    lambda_min, lambda_max : extreme eigenvalues of H.
    kappa : (lambda_max + lam_reg) / (lambda_min + lam_reg), the condition number of Theorem 2.
    grad_norm : ||gradient of (1)||_2 at theta, the solver's certificate of optimality.
    distance : the certified bound on ||theta - theta(P_n)||_2 (module docstring).
    iterations : Newton steps taken.
    grad_tol : tau, the public bound on ||grad F|| that a certified fit meets (TAU_FACTOR * G0).
    """

    status: str = field(metadata=NOT_PRIVATE)
    diagnosis: str = field(metadata=NOT_PRIVATE)
    theta: Array = field(metadata=NOT_PRIVATE)
    hessian: Array = field(metadata=NOT_PRIVATE)
    eigenvalues: Array = field(metadata=NOT_PRIVATE)
    lambda_min: float = field(metadata=NOT_PRIVATE)
    lambda_max: float = field(metadata=NOT_PRIVATE)
    kappa: float = field(metadata=NOT_PRIVATE)
    grad_norm: float = field(metadata=NOT_PRIVATE)
    distance: float = field(metadata=NOT_PRIVATE)
    iterations: int = field(metadata=NOT_PRIVATE)
    grad_tol: float
    lam_reg: float
    n: int
    d: int

    @property
    def has_minimiser(self) -> bool:
        """Whether theta is a certified minimiser. NOT private."""
        return self.status == MINIMISER

    def require_minimiser(self) -> FitResult:
        """This result, or NoMinimizerError with the diagnosis (for non-private callers only)."""
        if not self.has_minimiser:
            raise NoMinimizerError(f"the fit did not reach a minimiser: {self.diagnosis}")
        return self


def weighted_gram(X: Array, w: Array | None = None) -> Array:
    """(1/n) X^T diag(w) X for w >= 0 (None: all ones): compiled on GRAM_PARTS row ranges side by side, or by
    blocked symmetric rank-k updates (BLAS) without the compiled kernels."""
    n, d = X.shape
    if KERNELS is None:
        upper = _blas_gram(X, w)
    else:
        # One compiled signature: C-ordered native float64 (any other layout or dtype is copied once).
        X = np.ascontiguousarray(X, dtype=np.float64)
        w = np.ones(n) if w is None else np.ascontiguousarray(w, dtype=np.float64)
        cuts = [n * k // GRAM_PARTS for k in range(GRAM_PARTS + 1)]
        parts = np.empty((GRAM_PARTS, d, d))
        pool = _threads(os.getpid())
        list(pool.map(lambda k: KERNELS.gram_rows(X, w, cuts[k], cuts[k + 1], parts[k]), range(GRAM_PARTS)))
        upper = parts.sum(axis=0)
    return (upper + np.triu(upper, 1).T) / n


def _blas_gram(X: Array, w: Array | None) -> Array:
    """The upper triangle of X^T diag(w) X by syrk on blocks scaled by sqrt(w) (half of a GEMM's work)."""
    d = X.shape[1]
    acc = np.zeros((d, d), order="F")
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start : start + _CHUNK]
        if w is not None:
            block = block * np.sqrt(w[start : start + _CHUNK])[:, None]
        # block^T block via syrk on the transposed (Fortran-ordered) view, upper triangle only.
        acc = dsyrk(1.0, block.T, beta=1.0, c=acc, trans=0, lower=0, overwrite_c=1)
    return np.triu(acc)


@functools.cache
def _threads(pid: int) -> ThreadPoolExecutor:
    """The workers of weighted_gram, one per core (the kernel releases the GIL); the row ranges are fixed, so the
    sum does not depend on the number of workers. One pool per process: a forked child has none of its parent's
    threads."""
    return ThreadPoolExecutor(max_workers=min(GRAM_PARTS, os.cpu_count() or 1), thread_name_prefix="gram")


def mean_rows(X: Array, v: Array) -> Array:
    """(1/n) X^T v, summed in blocks of SUM_BLOCK rows with an exact sum of the block sums."""
    n = X.shape[0]
    parts = np.array([X[s : s + SUM_BLOCK].T @ v[s : s + SUM_BLOCK] for s in range(0, n, SUM_BLOCK)])
    return np.array([math.fsum(col) for col in parts.T]) / n


def _mean(v: Array) -> float:
    return math.fsum(np.add.reduceat(v, np.arange(0, v.size, SUM_BLOCK))) / v.size


def _null_direction(gram: Array) -> Array | None:
    """A unit vector v with X v ~ 0 (relative 1e-12 of the spectrum of X's Gram (1/n) X^T X), or None if X has
    full rank."""
    vals, vecs = eigh(gram)
    if vals[0] > 1e-12 * max(vals[-1], np.finfo(float).tiny):
        return None
    return vecs[:, 0]


def _hessian(X: Array, w: Array, gram: Array | None) -> Array:
    """weighted_gram(X, w); when every weight is 1/4 (the logistic loss at theta = 0, where Newton starts) and the
    Gram is known, 1/4 of it instead of another pass over X: scaling by a power of two is exact, so the result
    has the same bits (barring subnormal entries)."""
    if gram is not None and np.all(w == 0.25):
        return 0.25 * gram
    return weighted_gram(X, w)


def _rank_message(null: Array) -> str:
    cols = np.argsort(-np.abs(null))[: min(4, null.size)]
    involved = ", ".join(str(int(c)) for c in sorted(cols) if abs(null[c]) > 1e-6)
    return (
        "the design matrix is rank-deficient: some feature columns are linear combinations of others "
        f"(look at columns {involved}, 0-based); drop redundant columns (e.g. a full one-hot group next to "
        "an intercept) so every coefficient is identified"
    )


def separable(X: Array, y: Array) -> bool:
    """Whether labels y in {-1, +1} are (quasi-)separable: some theta != 0 has y_i <x_i, theta> >= 0 for all i.

    Exactly then the logistic loss without a ridge has no minimiser (Albert & Anderson, 1984), for a
    full-rank design. Decided by a linear programme: maximise sum_i y_i <x_i, theta> over the box
    |theta_j| <= 1 subject to y_i <x_i, theta> >= 0; the optimum is positive iff the labels separate.
    """
    A = X * y[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=[(-1.0, 1.0)] * X.shape[1],
                  method="highs")
    return bool(res.status == 0 and -res.fun > 1e-7 * len(y))


def fit(
    X: Array,
    y: Array,
    loss: Loss,
    lam_reg: float = 0.0,
    linear: Array | None = None,
    max_iter: int = MAX_ITER,
    radius: float | None = None,
    start: Array | None = None,
) -> FitResult:
    """Solve (1), plus linear^T theta when given, exactly by damped Newton (module docstring).

    `X` must already lie in the declared domain, whose l2 radius `radius` (r, public) sets G0 = sup|h'| r
    and the tolerance; None takes the largest row norm. `y` must be validated by `loss.labels`.
    Newton starts at `start` (default 0); the stopping rule and the certificate do not depend on it.
    Data-dependent failures are returned as a status, never raised.
    """
    n, d = X.shape
    if not (np.isfinite(lam_reg) and lam_reg >= 0):
        raise DataError(f"lambda_reg must be a finite number >= 0, got {lam_reg}")
    r = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X)))) if radius is None else float(radius)
    G0 = loss.h1_sup * max(r, np.finfo(float).tiny)
    tau = TAU_FACTOR * G0
    gram = None  # (1/n) X^T X, when the rank check has formed it
    if lam_reg == 0:
        gram = weighted_gram(X)
        null = _null_direction(gram)
        if null is not None:
            return _failed(RANK_DEFICIENT, _rank_message(null), tau, lam_reg, n, d)
    b = np.zeros(d) if linear is None else np.asarray(linear, dtype=np.float64)
    may_separate = loss.name == "logistic" and lam_reg == 0 and linear is None
    checked_separation = False
    theta = np.zeros(d) if start is None else np.array(start, dtype=np.float64)
    grad_norm = best = math.inf
    since_best = 0
    ahead = None  # (X theta, h') at theta, when the line search has formed them
    for it in range(max_iter + 1):
        t, h1 = ahead if ahead is not None else _derivative(X, y, loss, theta)
        grad = mean_rows(X, h1) + lam_reg * theta + b
        grad_norm = float(np.linalg.norm(grad))
        H = _hessian(X, loss.d2_of_d1(h1), gram)
        if grad_norm <= GRAD_TOL * G0:
            result = _certify(theta, H, grad_norm, tau, r, lam_reg, it, n, d)
            if result is not None:
                return result
        if may_separate and not checked_separation and float(np.linalg.norm(theta)) > _SEPARATION_CHECK_NORM:
            checked_separation = True
            if separable(X, y):
                return _failed(NO_MINIMISER, _separable_message(X, y, theta), tau, lam_reg, n, d)
        best, since_best = (grad_norm, 0) if grad_norm < 0.5 * best else (best, since_best + 1)
        if it == max_iter or since_best > STALL_STEPS:
            break
        eye = lam_reg * np.eye(d)
        step, a, ahead = _solve(H + eye, grad), 0.0, None
        if step is not None:
            a, ahead = _line_search(X, y, loss, lam_reg, b, theta, t, step, h1)
        if a == 0.0:  # Newton's model failed (a singular Hessian): the majoriser's direction
            step = _solve(_majoriser(X, y, t, loss, gram) + eye, grad)
            a, ahead = _line_search(X, y, loss, lam_reg, b, theta, t, step, h1) if step is not None else (0.0, None)
        if a == 0.0:  # no descent measurable: the rounding floor, above the tolerance
            break
        theta = theta + a * step
    if may_separate and not checked_separation and separable(X, y):
        return _failed(NO_MINIMISER, _separable_message(X, y, theta), tau, lam_reg, n, d)
    return _failed(NO_MINIMISER, _stall_message(it, grad_norm, tau, theta), tau, lam_reg, n, d)


def _solve(M: Array, grad: Array) -> Array | None:
    """-M^{-1} grad when M is positive definite and that is a descent direction, else None."""
    try:
        step = -cho_solve(cho_factor(M), grad)
    except LinAlgError:
        return None
    return step if np.all(np.isfinite(step)) and float(grad @ step) < 0 else None


def _majoriser(X: Array, y: Array, t: Array, loss: Loss, gram: Array | None) -> Array:
    """Curvature of a quadratic majoriser: tanh(s/2)/s >= phi''(s) for the robust loss (IRLS weights) and
    Boehning's 1/4 >= h'' for the logistic loss (1/4 of the Gram, when the rank check formed it); positive, so it
    gives a descent direction for full-rank X where the Hessian is (numerically) singular, e.g. when every
    residual is huge."""
    if loss.name == "logistic":
        return _hessian(X, np.full_like(t, 0.25), gram)
    s = y - t
    w = np.divide(np.tanh(0.5 * s), s, out=np.full_like(s, 0.5), where=np.abs(s) > 1e-8)
    return weighted_gram(X, w)


def _derivative(X: Array, y: Array, loss: Loss, theta: Array) -> tuple[Array, Array]:
    """(t, h'(t)) with t = X theta, formed afresh (no drift); theta = 0, where Newton starts, needs no product."""
    t = X @ theta if theta.any() else np.zeros(X.shape[0])
    return t, loss.d1(t, y)


def _line_search(X: Array, y: Array, loss: Loss, lam_reg: float, b: Array, theta: Array, t: Array,
                 step: Array, h1: Array) -> tuple[float, tuple[Array, Array] | None]:
    """A step a in (0, 1] with psi'(a) in [0.1 psi'(0), 0], or 0 when none is found (rounding floor); with the
    full step, also _derivative at theta + step, for the next Newton step.

    psi(a) = F(theta + a step) is convex, so psi' <= 0 on [0, a] and psi decreases there; psi'(a) >=
    0.1 psi'(0) rules out steps too short to matter. The full Newton step is taken when psi'(1) <= 0; its slope
    is formed at X (theta + step) itself, exactly as the next step's gradient will be, so that gradient reuses
    it. h1 = loss.d1(t, y), computed for the gradient: psi'(0) needs no pass of its own.
    """
    dt = X @ step
    if not np.all(np.isfinite(dt)):  # an overflowed step: no slope can be formed
        return 0.0, None

    def slope(a: float, h1_a: Array) -> float:
        return _mean(h1_a * dt) + float((lam_reg * (theta + a * step) + b) @ step)

    f0 = slope(0.0, h1)
    if not f0 < 0:
        return 0.0, None
    ahead = _derivative(X, y, loss, theta + step)
    f1 = slope(1.0, ahead[1])
    if f1 <= 0:
        return 1.0, ahead
    lo, hi, flo, fhi = 0.0, 1.0, f0, f1 if math.isfinite(f1) else math.inf
    for i in range(80):
        # Regula falsi while it makes progress, bisection otherwise.
        a = lo - flo * (hi - lo) / (fhi - flo) if math.isfinite(fhi) and i % 3 != 2 else 0.5 * (lo + hi)
        if not lo < a < hi:
            a = 0.5 * (lo + hi)
        fa = slope(a, loss.d1(t + a * dt, y))
        if 0.1 * f0 <= fa <= 0:
            return a, None
        if fa <= 0:
            lo, flo = a, fa
        else:
            hi, fhi = a, fa
        if hi - lo <= 1e-15 * hi:
            break
    return lo, None


def certified_distance(tau: float, r: float, mu: float) -> float:
    """-ln(1 - q)/r with q = r tau/mu: the farthest a point with ||grad F|| <= tau lies from the minimiser of F
    when the curvature is at least mu (module docstring); inf when q >= 1, tau/mu in the limit r -> 0."""
    q = r * tau / mu if mu > 0 else math.inf
    if not q < 1:
        return math.inf
    return -math.log1p(-q) / r if r > 0 else tau / mu


def _certify(theta: Array, H: Array, grad_norm: float, tau: float, r: float, lam_reg: float, it: int, n: int,
             d: int) -> FitResult | None:
    """The result when the existence certificate q = r tau / mu < 1 holds (module docstring), else None."""
    vals = eigh(H, eigvals_only=True)
    lmin, lmax = float(max(vals[0], 0.0)), float(vals[-1])
    mu = lmin + lam_reg
    distance = certified_distance(tau, r, mu)
    if not math.isfinite(distance):
        return None
    return FitResult(
        status=MINIMISER,
        diagnosis="theta is the minimiser of (1), certified by its gradient norm and Hessian",
        theta=theta,
        hessian=H,
        eigenvalues=vals,
        lambda_min=lmin,
        lambda_max=lmax,
        kappa=(lmax + lam_reg) / mu,
        grad_norm=grad_norm,
        distance=distance,
        iterations=it,
        grad_tol=tau,
        lam_reg=float(lam_reg),
        n=n,
        d=d,
    )


def _failed(status: str, why: str, tau: float, lam_reg: float, n: int, d: int) -> FitResult:
    """A fit without a certified minimiser: lambda_min is 0 by definition, everything else NaN."""
    nan = np.full(d, np.nan)
    return FitResult(
        status=status, diagnosis=why, theta=nan, hessian=np.full((d, d), np.nan), eigenvalues=nan,
        lambda_min=0.0, lambda_max=math.nan, kappa=math.inf, grad_norm=math.nan, distance=math.inf,
        iterations=0, grad_tol=tau, lam_reg=float(lam_reg), n=n, d=d,
    )


def _stall_message(it: int, grad_norm: float, tau: float, theta: Array) -> str:
    size = float(np.linalg.norm(theta))
    hint = (f"the coefficients are huge (||theta|| ~ {size:.1e}), beyond what double precision can resolve to "
            "the tolerance: rescale the responses y" if size > 1e4 else
            "check the data for extreme or duplicated columns")
    return (f"no certified minimiser after {it} Newton steps (gradient norm {grad_norm:.2e}, tolerance "
            f"{tau:.1e}); {hint}")


def _separable_message(X: Array, y: Array, theta: Array) -> str:
    everyone = bool(np.all(y * (X @ theta) > 0))
    which = "every training point is classified correctly" if everyone else "no point is misclassified"
    return (
        f"the logistic loss has no minimiser: the labels are separable ({which} by a linear rule), so the "
        "coefficients grow without bound; set a positive lambda_reg or remove the separating feature"
    )
