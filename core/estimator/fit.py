"""The exact empirical minimiser theta(P_n) of problem (1) and its Hessian (stage 0, non-private).

theta(P_n) = argmin F(theta), F(theta) = (1/n) sum_i h(<theta, x_i>, y_i) + (lam_reg/2) ||theta||^2
(+ b^T theta for objective perturbation (15)). The Hessian H = (1/n) sum_i h''(<theta, x_i>, y_i) x_i x_i^T
is reported WITHOUT lam_reg (docs/method.md §1).

How the fit stays exact for every input the domain admits:
- Stopping rule in absolute terms. The gradient is an average of terms x_i h'(.) of norm <= G0 = sup|h'| r,
  so the solver stops at ||grad F|| <= GRAD_TOL * G0 whatever the responses; a response of 1e16 makes the
  objective 1e11 but leaves every gradient term bounded.
- No objective values. The line search works on the directional derivative psi'(a) = grad F(theta + a p)^T p,
  which is exact to rounding however large a residual is, and psi' is nondecreasing (F is convex).
- Residuals without cancellation. theta is carried as a pair hi + lo (twice the working precision) and
  z = X theta - y (robust) or X theta (logistic) is formed in compensated arithmetic (core.estimator.kernels.
  residual_rows, Dot2) whenever plain arithmetic could err by more than a small share of the tolerance,
  so the rounding of a residual is about 2^-53 |z| + gamma^2 (|y| + |x|^T |theta|), not 2^-53 |x|^T |theta|:
  a response of 1e9 on coefficients of 1e9 loses nothing. The gradient is summed in blocks of SUM_BLOCK
  rows with an exact sum of the block sums. `_Residuals.bound` bounds the whole error of the computed
  gradient, and a fit is certified only when the computed norm plus that bound is at most tau.
- A certificate of existence. Both losses satisfy h''(t + s) >= e^(-|s|) h''(t), so along any ray from
  theta~ the directional derivative of F grows at least like mu (1 - e^(-r l))/r, mu = lambda_min(H(theta~))
  + lam_reg. With ||grad F(theta~)|| <= tau and q = r tau / mu < 1, F increases on every ray beyond
  l = -ln(1 - q)/r: a minimiser exists and ||theta~ - theta(P_n)|| <= l. Certified only when q <= 1/2
  (then every eigenvalue moves by a factor within e^(+-r l) <= 2, which `eigen_error` turns into public
  bounds). Without that certificate the result says there is no (certified) minimiser, and the private
  stages treat lambda_min as 0; docs/privacy.md ("Data with no minimiser") says exactly which data can
  end there and why the count keeps sensitivity 1.
Data-dependent failures (rank deficiency, separable labels, no convergence) are results, not exceptions:
a private run must end alike on neighbouring data (docs/privacy.md, "Data with no minimiser").
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
from scipy.linalg.blas import dsyrk
from scipy.optimize import linprog

from core.errors import DataError, NoMinimizerError
from core.estimator.compiled import kernels
from core.estimator.losses import Loss
from core.estimator.rounding import (
    GRAD_TOL,
    H1_ROUNDING,
    PLAIN_SHARE,
    SPLIT,
    SUM_BLOCK,
    TAU_FACTOR,
    UNIT,
    gamma,
    hessian_error,
    residual_error,
)
from core.estimator.rows import InMemory, Rows
from core.privacy.marks import NOT_PRIVATE

Array = NDArray[np.float64]
MAX_ITER = 200
STALL_STEPS = 12  # Newton steps without halving the gradient norm: the rounding floor was reached
MINIMISER, RANK_DEFICIENT, NO_MINIMISER = "minimiser", "rank_deficient", "no_minimiser"
_CHUNK = 1 << 15  # rows per block of the BLAS Gram: keeps the temporaries in cache
_THREADED_ENTRIES = 1 << 19  # fewer entries of X take less time than handing GRAM_PARTS ranges to threads
GRAM_PARTS = 8  # row ranges of the compiled Gram, each summed on its own, then in order
# From this many rows the Gram is compiled (twice BLAS's speed there); below, BLAS's blocks. A public fact picks the
# sum's order, so a fit's last bits never depend on whether the kernels were built yet.
COMPILED_GRAM_ROWS = 250_000
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
    theta : the minimiser theta(P_n) of (1) (to within `distance`), rounded to float64.
    theta_lo : what theta lacks: the certified point is theta + theta_lo exactly (twice the working precision).
    hessian : H = P_n h''(<theta, x>, y) x x^T, without lam_reg.
    eigenvalues : all eigenvalues of H, ascending.
    lambda_min, lambda_max : extreme eigenvalues of H.
    kappa : (lambda_max + lam_reg) / (lambda_min + lam_reg), the condition number of Theorem 2.
    grad_norm : a bound on ||gradient of (1)||_2 at theta + theta_lo: the computed norm plus its rounding bound.
    distance : the certified bound on ||theta - theta(P_n)||_2 (module docstring).
    iterations : Newton steps taken.
    grad_tol : tau, the public bound on ||grad F|| that a certified fit meets (TAU_FACTOR * G0).
    """

    status: str = field(metadata=NOT_PRIVATE)
    diagnosis: str = field(metadata=NOT_PRIVATE)
    theta: Array = field(metadata=NOT_PRIVATE)
    theta_lo: Array = field(metadata=NOT_PRIVATE)
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

    def along(self, u: Array) -> tuple[float, float]:
        """u^T (theta + theta_lo) as a pair (value, rest) whose exact sum is the exact inner product, so noise can be
        added before the one rounding of a release. NOT private."""
        exact = sum((Fraction(float(a)) * (Fraction(float(h)) + Fraction(float(low)))
                     for a, h, low in zip(u, self.theta, self.theta_lo, strict=True) if a), Fraction(0))
        value = float(exact)
        return value, float(exact - Fraction(value))

    def require_minimiser(self) -> FitResult:
        """This result, or NoMinimizerError with the diagnosis (for non-private callers only)."""
        if not self.has_minimiser:
            raise NoMinimizerError(f"the fit did not reach a minimiser: {self.diagnosis}")
        return self


def weighted_gram(X: Array, w: Array | None = None) -> Array:
    """(1/n) X^T diag(w) X for w >= 0 (None: all ones), of rows in memory (`_upper`)."""
    return _gram_mean([_upper(X, w)], X.shape[0])


def gram(rows: Rows) -> Array:
    """(1/n) X^T X over every block."""
    return _gram_mean(rows.map(_gram_block), rows.n)


def _gram_block(X: Array, y: Array) -> Array:
    return _upper(X, None)


def _upper(X: Array, w: Array | None) -> Array:
    """The upper triangle of X^T diag(w) X: from COMPILED_GRAM_ROWS rows (of this block, a public fact) compiled on
    GRAM_PARTS row ranges side by side (awaiting the kernels' build), else, or without the compiled kernels, by
    blocked symmetric rank-k updates (BLAS)."""
    compiled = kernels(wait=True) if X.shape[0] >= COMPILED_GRAM_ROWS else None
    return _blas_gram(X, w) if compiled is None else _compiled_gram(compiled, X, w)


def _gram_mean(uppers: list[Array], n: int) -> Array:
    """The blocks' upper triangles added exactly, with one rounding (one block: itself), so a term of a Gram read in
    blocks passes through no more additions than in memory (core.estimator.rounding.gram_depth); made symmetric and
    divided by n."""
    if len(uppers) == 1:
        upper = uppers[0]
    else:
        flat = np.stack(uppers).reshape(len(uppers), -1)
        upper = np.array([math.fsum(column) for column in flat.T]).reshape(uppers[0].shape)
    return (upper + np.triu(upper, 1).T) / n


def _compiled_gram(compiled: ModuleType, X: Array, w: Array | None) -> Array:
    """The upper triangle of X^T diag(w) X by core.estimator.kernels.gram_rows on GRAM_PARTS row ranges."""
    n, d = X.shape
    # One compiled signature: C-ordered native float64 (any other layout or dtype is copied once).
    X = np.ascontiguousarray(X, dtype=np.float64)
    w = np.ones(n) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    cuts = [n * k // GRAM_PARTS for k in range(GRAM_PARTS + 1)]
    parts = np.empty((GRAM_PARTS, d, d))
    pool = _threads(os.getpid())
    list(pool.map(lambda k: compiled.gram_rows(X, w, cuts[k], cuts[k + 1], parts[k]), range(GRAM_PARTS)))
    return parts.sum(axis=0)


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
    return _fsum_rows(_chunk_sums(X, v)) / X.shape[0]


def _chunk_sums(X: Array, v: Array) -> Array:
    """X^T v over each SUM_BLOCK rows, one row per chunk: a data set read in blocks of a multiple of SUM_BLOCK rows
    has the same chunks as in memory, so the exact sum of all of them has the same bits."""
    return np.array([X[s : s + SUM_BLOCK].T @ v[s : s + SUM_BLOCK] for s in range(0, X.shape[0], SUM_BLOCK)]
                    ).reshape(-1, X.shape[1])


def _chunk_sum(v: Array) -> Array:
    return np.add.reduceat(v, np.arange(0, v.size, SUM_BLOCK)) if v.size else np.zeros(0)


def _fsum_rows(parts: Array) -> Array:
    return np.array([math.fsum(col) for col in parts.T])


def _null_direction(gram: Array) -> Array | None:
    """A unit vector v with X v ~ 0 (relative 1e-12 of the spectrum of X's Gram (1/n) X^T X), or None if X has
    full rank."""
    vals, vecs = eigh(gram)
    if vals[0] > 1e-12 * max(vals[-1], np.finfo(float).tiny):
        return None
    return vecs[:, 0]


def _rank_message(null: Array) -> str:
    cols = np.argsort(-np.abs(null))[: min(4, null.size)]
    involved = ", ".join(str(int(c)) for c in sorted(cols) if abs(null[c]) > 1e-6)
    return (
        "the design matrix is rank-deficient: some feature columns are linear combinations of others "
        f"(look at columns {involved}, 0-based); drop redundant columns (e.g. a full one-hot group next to "
        "an intercept) so every coefficient is identified"
    )


def _separation(rows: Rows, hi: Array, r: float, first: bool) -> bool | None:
    """`separates` for the iterate's own direction (which grows along a separating one when the labels are separable),
    then, the first time and for rows in memory, `separable`'s linear programme: no programme over every row of a
    data set read in blocks fits in memory, so there the iterate is looked at each time its norm doubles."""
    everyone = separates(rows, hi, r)
    in_memory = rows.arrays()
    if everyone is None and first and in_memory is not None:
        everyone = separable(*in_memory)
    return everyone


def separable(X: Array, y: Array) -> bool | None:
    """Whether labels y in {-1, +1} are proven separable: None when not proven, else whether every margin is > 0 (a
    direction theta != 0 with y_i <x_i, theta> >= 0 for all i and > 0 for some is proven).

    Exactly then the logistic loss without a ridge has no minimiser (Albert & Anderson, 1984), for a
    full-rank design. A linear programme proposes theta: maximise sum_i y_i <x_i, theta> over the box
    |theta_j| <= 1 subject to y_i <x_i, theta> >= 0, and `separates` proves it, so a solver's tolerance can never
    declare data with a minimiser separable.
    """
    A = X * y[:, None]
    res = linprog(-A.sum(axis=0), A_ub=-A, b_ub=np.zeros(len(y)), bounds=[(-1.0, 1.0)] * X.shape[1],
                  method="highs")
    if res.status != 0 or not -res.fun > 1e-7 * len(y):
        return None
    return separates(InMemory(X, y), np.asarray(res.x, dtype=np.float64), _largest_norm(X))


def separates(rows: Rows, theta: Array, r: float) -> bool | None:
    """Whether theta separates the rows (row norms at most r), proven: None when not, else whether every margin is
    > 0. Every margin y_i <x_i, theta> is formed by Dot2 with its error bound, and exactly (rational arithmetic) for
    the few rows within that bound of 0 (at most 10 d in all)."""
    size = residual_error(rows.d, r * float(np.linalg.norm(theta)) * 1.01, True)
    parts = rows.map(functools.partial(_margins_block, theta, size))
    if any(p is None for p in parts) or sum(p[0] for p in parts) > 10 * rows.d or not any(p[1] for p in parts):
        return None
    return all(p[2] for p in parts)


def _margins_block(theta: Array, size: float, X: Array, y: Array) -> tuple[int, bool, bool] | None:
    """(rows within the error bound of 0, some margin proven > 0, every margin proven > 0) of one block, or None when
    a margin is negative or too many are unsure."""
    margins = y * residuals(X, y, theta, np.zeros_like(theta), False)
    err = UNIT * np.abs(margins) + size
    unsure = np.flatnonzero(np.abs(margins) <= err)
    if np.any(margins < -err) or unsure.size > 10 * X.shape[1]:
        return None
    exact = [Fraction(float(y[i])) * sum(map(_product, X[i], theta), Fraction(0)) for i in unsure]
    if any(m < 0 for m in exact):
        return None
    return unsure.size, bool(np.any(margins > err)), all(m > 0 for m in exact)


def _product(a: float, b: float) -> Fraction:
    return Fraction(float(a)) * Fraction(float(b))


def fit(X: Array, y: Array, loss: Loss, lam_reg: float = 0.0, **options: Any) -> FitResult:
    """`fit_rows` on rows in memory (options: linear, max_iter, radius, start)."""
    return fit_rows(InMemory(X, y), loss, lam_reg, **options)


def fit_rows(
    rows: Rows,
    loss: Loss,
    lam_reg: float = 0.0,
    linear: Array | None = None,
    max_iter: int = MAX_ITER,
    radius: float | None = None,
    start: Array | None = None,
) -> FitResult:
    """Solve (1), plus linear^T theta when given, exactly by damped Newton (module docstring), one pass over the
    rows per Newton step (the line search's full step forms the next step's sums).

    The rows must already lie in the declared domain, whose l2 radius `radius` (r, public) sets G0 = sup|h'| r
    and the tolerance; None takes the largest row norm. y must be validated by `loss.labels`.
    Newton starts at `start` (default 0); the stopping rule and the certificate do not depend on it.
    Data-dependent failures are returned as a status, never raised.
    """
    n, d = rows.n, rows.d
    if not (np.isfinite(lam_reg) and lam_reg >= 0):
        raise DataError(f"lambda_reg must be a finite number >= 0, got {lam_reg}")
    first = rows.map(functools.partial(_first_block, lam_reg == 0, radius is None))
    r = max(f.norm for f in first) if radius is None else float(radius)
    G0 = loss.h1_sup * max(r, np.finfo(float).tiny)
    tau = TAU_FACTOR * G0
    squares = None  # (1/n) X^T X, when the rank check has formed it
    if lam_reg == 0:
        squares = _gram_mean([f.upper for f in first], n)
        null = _null_direction(squares)
        if null is not None:
            return _failed(RANK_DEFICIENT, _rank_message(null), tau, lam_reg, n, d)
    b = np.zeros(d) if linear is None else np.asarray(linear, dtype=np.float64)
    res = _Residuals(loss, r, max(f.response for f in first), d)
    # the rows' own error terms are formed only where the flat bound could exceed the least room a fit certifies in
    rowwise = functools.partial(res.needs_rows, lam_reg=lam_reg, b=b, room=tau - GRAD_TOL * G0)
    may_separate = loss.name == "logistic" and lam_reg == 0 and linear is None
    check_at = _SEPARATION_CHECK_NORM  # the iterate's norm at which separation is next looked for
    in_memory, accepted = rows.arrays(), False
    hi = np.zeros(d) if start is None else np.array(start, dtype=np.float64)
    lo = np.zeros(d)
    grad_norm = best = math.inf
    since_best = 0
    ahead = None  # the sums at theta + step, when the line search has formed them
    for it in range(max_iter + 1):
        hi, lo = res.point(hi, lo)
        # At theta = 0 every logistic weight h''(0) is 1/4: the Hessian is 1/4 of the rank check's Gram (exact).
        quarter = squares is not None and loss.name == "logistic" and not (hi.any() or lo.any())
        here = ahead if ahead is not None else _evaluate(rows, res, hi, lo, not quarter, None, rowwise(hi))
        H = 0.25 * squares if quarter else here.hessian
        grad = here.grad + lam_reg * hi + (lam_reg * lo + b)
        grad_norm = float(np.linalg.norm(grad))
        if grad_norm <= GRAD_TOL * G0:
            bound = res.bound(hi, here.worst, lam_reg, b, tau - grad_norm)
            result = _certify(hi, lo, H, grad_norm + bound, tau, r, lam_reg, loss, it, n, d)
            if result is not None:
                return result
        if may_separate and float(np.linalg.norm(hi)) > check_at:
            everyone = _separation(rows, hi, r, check_at == _SEPARATION_CHECK_NORM)
            check_at = 2.0 * float(np.linalg.norm(hi))
            if everyone is not None:
                return _failed(NO_MINIMISER, _separable_message(everyone), tau, lam_reg, n, d)
        best, since_best = (grad_norm, 0) if grad_norm < 0.5 * best else (best, since_best + 1)
        if it == max_iter or since_best > STALL_STEPS:
            break
        eye = lam_reg * np.eye(d)
        step, a, ahead = _solve(H + eye, grad), 0.0, None
        # Read in blocks a pass costs a read of every row, so the full step's pass forms the next step's sums too; in
        # memory a pass costs its arithmetic alone, so it does so only while full steps are being taken.
        eager = in_memory is None or accepted
        search = functools.partial(_line_search, rows, res, lam_reg, b, hi, lo, grad, rowwise, eager)
        if step is not None:
            a, ahead = search(step)
        accepted = a == 1.0
        if a == 0.0:  # Newton's model failed (a singular Hessian): the majoriser's direction
            step = _solve(_majoriser(rows, res, hi, lo, squares) + eye, grad)
            a, ahead = search(step) if step is not None else (0.0, None)
        if a == 0.0:  # no descent measurable: the rounding floor, above the tolerance
            break
        hi, lo = _advance(hi, lo, a * step)
    everyone = _separation(rows, hi, r, check_at == _SEPARATION_CHECK_NORM) if may_separate else None
    if everyone is not None:
        return _failed(NO_MINIMISER, _separable_message(everyone), tau, lam_reg, n, d)
    return _failed(NO_MINIMISER, _stall_message(it, grad_norm, tau, hi), tau, lam_reg, n, d)


@dataclass(frozen=True)
class _First:
    """What the fit's first pass reads of a block: the upper triangle of X^T X (for the rank check, when there is no
    ridge), the largest row norm (when no radius is given) and the largest |y|."""

    upper: Array | None
    norm: float
    response: float


def _first_block(squares: bool, norms: bool, X: Array, y: Array) -> _First:
    return _First(_upper(X, None) if squares else None, _largest_norm(X) if norms else 0.0,
                  float(np.max(np.abs(y), initial=0.0)))


def _largest_norm(X: Array) -> float:
    return float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X), initial=0.0)))


@dataclass(frozen=True)
class _Sums:
    """One block's sums at a point: X^T h' over each SUM_BLOCK rows (`_chunk_sums`), the upper triangle of
    sum h'' x x^T, h' <x, step> over each SUM_BLOCK rows, and the largest of the rows' error terms of h' (inf when
    not formed: `_Residuals.bound`)."""

    grad: Array | None
    upper: Array | None
    slope: Array | None
    worst: float


@dataclass(frozen=True)
class _Point:
    """The data's part of F's derivatives at a point: (1/n) sum x_i h'_i, H, psi'(a) less the ridge and linear
    terms, (1/n) sum h'_i <x_i, step>, and the largest error term of h'."""

    grad: Array | None
    hessian: Array | None
    slope: float
    worst: float


def _evaluate(rows: Rows, res: _Residuals, hi: Array, lo: Array, hessian: bool, step: Array | None,
              rowwise: bool) -> _Point:
    """One pass at hi + lo: the blocks' `_Sums`, added in block order (exactly, for the gradient and the slope)."""
    parts = rows.map(functools.partial(_evaluate_block, res, hi, lo, hessian, step, rowwise))
    n = rows.n
    return _Point(
        grad=_fsum_rows(np.vstack([p.grad for p in parts])) / n if parts[0].grad is not None else None,
        hessian=_gram_mean([p.upper for p in parts], n) if hessian else None,
        slope=math.fsum(np.concatenate([p.slope for p in parts])) / n if step is not None else math.nan,
        worst=max(p.worst for p in parts),
    )


def _evaluate_block(res: _Residuals, hi: Array, lo: Array, hessian: bool, step: Array | None, rowwise: bool,
                    X: Array, y: Array) -> _Sums:
    z, h1 = res.derivative(X, y, hi, lo)
    return _Sums(
        grad=_chunk_sums(X, h1) if hessian or step is None else None,  # a pass for the slope alone skips it
        upper=_upper(X, res.loss.d2_of_d1(h1)) if hessian else None,
        slope=None if step is None else _chunk_sum(h1 * (X @ step)),
        worst=res.worst(y, z, hi) if rowwise else math.inf,
    )


def _slope_block(res: _Residuals, hi: Array, lo: Array, step: Array, a: float, X: Array, y: Array) -> Array:
    """`_slope_sums` of one block, its residuals at hi + lo and dz = X step formed afresh."""
    return _slope_sums(res.loss, res.derivative(X, y, hi, lo)[0], X @ step, y, a)


def _slope_sums(loss: Loss, z: Array, dz: Array, y: Array, a: float) -> Array:
    """h'(z + a dz) dz over each SUM_BLOCK rows."""
    return _chunk_sum(loss.d1_of_z(z + a * dz, y) * dz)


@dataclass(frozen=True)
class _Residuals:
    """z = X theta - y (robust) or X theta (logistic) at theta = hi + lo, and h'(z) = h'(t, y), with a bound on
    the rounding of both. Plain arithmetic (one BLAS product at hi) is used while its bound is below PLAIN_SHARE
    of G0, compensated arithmetic (Dot2 at hi + lo) beyond: the choice changes the bits, never the bound. y_max is
    the largest |y_i|, d the number of features."""

    loss: Loss
    r: float
    y_max: float
    d: int

    def _size(self, hi: Array) -> float:
        # |y_i| + sum_j |x_ij theta_j| <= max|y| + r ||theta||_2 (Cauchy-Schwarz on the domain), with room for lo.
        return self.y_max + self.r * float(np.linalg.norm(hi)) * (1.0 + 4.0 * UNIT)

    def compensated(self, hi: Array) -> bool:
        return self.loss.h2_sup * residual_error(self.d, self._size(hi), False) > PLAIN_SHARE * self.loss.h1_sup

    def point(self, hi: Array, lo: Array) -> tuple[Array, Array]:
        """The iterate as evaluated: in plain arithmetic lo is folded into hi (the point is then hi itself)."""
        if lo.any() and not self.compensated(hi):
            return hi + lo, np.zeros_like(lo)
        return hi, lo

    def derivative(self, X: Array, y: Array, hi: Array, lo: Array) -> tuple[Array, Array]:
        """(z, h') of the rows X, y at hi + lo, formed afresh (no drift); theta = 0, where Newton starts, needs no
        product."""
        centred = self.loss.centred
        if not (hi.any() or lo.any()):
            z = -y if centred else np.zeros(X.shape[0])
        elif self.compensated(hi):
            z = residuals(X, y, hi, lo, centred)
        else:
            z = X @ hi - y if centred else X @ hi
        return z, self.loss.d1_of_z(z, y)

    def _flat(self, hi: Array, lam_reg: float, b: Array) -> tuple[float, float]:
        """(fixed, flat) of `bound`: the bound is fixed + r flat when every row may have h'' = h''_sup."""
        loss, compensated = self.loss, self.compensated(hi)
        G0 = loss.h1_sup * self.r
        other = G0 + lam_reg * float(np.linalg.norm(hi)) + float(np.linalg.norm(b))
        fixed = gamma(SUM_BLOCK + 2) * G0 + 4.0 * UNIT * other + self.r * H1_ROUNDING
        # |s h''(s)| <= 1/2 for both losses: Dot2's 2^-53 |z| moves h' by at most 2^-54.
        flat = loss.h2_sup * residual_error(self.d, self._size(hi), compensated) + (0.5 * UNIT if compensated else 0.0)
        return fixed, flat

    def needs_rows(self, hi: Array, lam_reg: float, b: Array, room: float) -> bool:
        """Whether `bound` at hi could need the rows' own error terms (`worst`) within `room`."""
        fixed, flat = self._flat(hi, lam_reg, b)
        return not fixed + self.r * flat <= room

    def bound(self, hi: Array, worst: float, lam_reg: float, b: Array, room: float) -> float:
        """An upper bound on ||computed gradient - grad F(hi + lo)||_2 (docs/privacy.md, "The fit's tolerance"), worst
        the largest of the rows' error terms of h' at the residuals the gradient was formed from (`worst`).

        Row i's residual errs by at most D_i = residual_error(d, |y_i| + r ||theta||) (plus 2^-53 |z_i| for Dot2),
        so h' errs by at most h''(max(0, |z_i| - D_i)) D_i (h'' decreases in |z|: a huge residual, an outlier,
        costs nothing) plus H1_ROUNDING; the mean of x_i times those errors is at most r times the largest. The
        block sums err by gamma_(SUM_BLOCK + 2) G0, the ridge and linear terms by a few units of 2^-53 of their size.
        The rows' terms count only when the bound with h'' <= h''_sup for every row exceeds `room`.
        """
        fixed, flat = self._flat(hi, lam_reg, b)
        return fixed + self.r * (flat if fixed + self.r * flat <= room else worst)

    def worst(self, y: Array, z: Array, hi: Array) -> float:
        """The largest error term h''(max(0, |z_i| - D_i)) D_i of the rows y, z (`bound`)."""
        compensated = self.compensated(hi)
        size = np.abs(y) + self.r * float(np.linalg.norm(hi)) * (1.0 + 4.0 * UNIT)
        err = residual_error(self.d, size, compensated) + (UNIT * np.abs(z) if compensated else 0.0)
        near = np.maximum(np.abs(z) - err, 0.0)
        return float(np.max(self.loss.d2(near, np.zeros_like(near)) * err, initial=0.0)) * (1.0 + 1e-9)


def weighted_hessian(rows: Rows, loss: Loss, point: Array) -> Array:
    """H(point) = (1/n) sum_i h''(<point, x_i>, y_i) x_i x_i^T, the residuals by Dot2, without a ridge."""
    return _gram_mean(rows.map(functools.partial(_hessian_block, loss, point)), rows.n)


def _hessian_block(loss: Loss, point: Array, X: Array, y: Array) -> Array:
    z = residuals(X, y, point, np.zeros_like(point), loss.centred)
    return _upper(X, loss.d2(z, np.zeros_like(z)) if loss.centred else loss.d2(z, y))


def residuals(X: Array, y: Array, hi: Array, lo: Array, centred: bool) -> Array:
    """x_i^T (hi + lo) - y_i (centred) or x_i^T (hi + lo) for every row, by Dot2 (core.estimator.kernels.residual_rows):
    compiled on GRAM_PARTS row ranges side by side, or the same operations column by column in NumPy (the same
    bits) without the compiled kernels."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    hi, lo = np.ascontiguousarray(hi, dtype=np.float64), np.ascontiguousarray(lo, dtype=np.float64)
    n = X.shape[0]
    out = np.empty(n)
    compiled = kernels()  # the same bits either way: never awaited
    if compiled is not None and n * X.shape[1] < _THREADED_ENTRIES:  # rows are independent: the same bits either way
        compiled.residual_rows(X, y, hi, lo, centred, 0, n, out)
        return out
    if compiled is not None:
        cuts = [n * k // GRAM_PARTS for k in range(GRAM_PARTS + 1)]
        pool = _threads(os.getpid())
        list(pool.map(lambda k: compiled.residual_rows(X, y, hi, lo, centred, cuts[k], cuts[k + 1], out),
                      range(GRAM_PARTS)))
        return out
    for s in range(0, n, _CHUNK):
        out[s : s + _CHUNK] = _dot2_columns(X[s : s + _CHUNK], y[s : s + _CHUNK], hi, lo, centred)
    return out


def _dot2_columns(X: Array, y: Array, hi: Array, lo: Array, centred: bool) -> Array:
    """core.estimator.kernels.residual_rows in NumPy: the same operations in the same order, column by column."""
    split = SPLIT
    S = -y if centred else np.zeros(X.shape[0])
    C = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        c = split * hi[j]
        bh = c - (c - hi[j])
        bl = hi[j] - bh
        a = X[:, j]
        p = a * hi[j]
        t = split * a
        ah = t - (t - a)
        al = a - ah
        e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
        s2 = S + p
        zz = s2 - S
        q = (S - (s2 - zz)) + (p - zz)
        S = s2
        C += q + e + a * lo[j]
    return S + C


def _advance(hi: Array, lo: Array, step: Array) -> tuple[Array, Array]:
    """(hi, lo) + step in twice the working precision: Knuth's TwoSum, then a renormalisation."""
    s = hi + step
    v = s - hi
    err = (hi - (s - v)) + (step - v)
    lo = lo + err
    new_hi = s + lo
    return new_hi, lo - (new_hi - s)


def _solve(M: Array, grad: Array) -> Array | None:
    """-M^{-1} grad when M is positive definite and that is a descent direction, else None."""
    try:
        step = -cho_solve(cho_factor(M), grad)
    except LinAlgError:
        return None
    return step if np.all(np.isfinite(step)) and float(grad @ step) < 0 else None


def _majoriser(rows: Rows, res: _Residuals, hi: Array, lo: Array, squares: Array | None) -> Array:
    """Curvature of a quadratic majoriser: tanh(s/2)/s >= phi''(s) for the robust loss (IRLS weights, s = -z) and
    Boehning's 1/4 >= h'' for the logistic loss (1/4 of the Gram, when the rank check formed it); positive, so it
    gives a descent direction for full-rank X where the Hessian is (numerically) singular, e.g. when every
    residual is huge."""
    if res.loss.name == "logistic" and squares is not None:
        return 0.25 * squares
    return _gram_mean(rows.map(functools.partial(_majoriser_block, res, hi, lo)), rows.n)


def _majoriser_block(res: _Residuals, hi: Array, lo: Array, X: Array, y: Array) -> Array:
    if res.loss.name == "logistic":
        return _upper(X, np.full(X.shape[0], 0.25))
    z, _ = res.derivative(X, y, hi, lo)
    return _upper(X, np.divide(np.tanh(0.5 * z), z, out=np.full_like(z, 0.5), where=np.abs(z) > 1e-8))


def _line_search(rows: Rows, res: _Residuals, lam_reg: float, b: Array, hi: Array, lo: Array, grad: Array,
                 rowwise: Callable[[Array], bool], eager: bool, step: Array) -> tuple[float, _Point | None]:
    """A step a in (0, 1] with psi'(a) in [0.1 psi'(0), 0], or 0 when none is found (rounding floor); with the
    full step, also the sums at theta + step, for the next Newton step.

    psi(a) = F(theta + a step) is convex, so psi' <= 0 on [0, a] and psi decreases there; psi'(a) >=
    0.1 psi'(0) rules out steps too short to matter. psi'(0) = grad^T step. The full Newton step is taken when
    psi'(1) <= 0; when `eager`, its slope is formed in the pass that forms the next step's gradient and Hessian at
    the full step's own residuals, so an accepted step costs one pass, and a rejected one a Hessian it never uses.
    """
    theta = hi + lo

    def outer(a: float) -> float:
        return float((lam_reg * (theta + a * step) + b) @ step)

    in_memory = rows.arrays()

    @functools.cache
    def kept() -> tuple[Array, Array, Array]:
        """In memory, the residuals at theta and X step, formed at the first try and kept for the others."""
        X, y = in_memory
        return res.derivative(X, y, hi, lo)[0], X @ step, y

    def slope(a: float) -> float:
        parts = ([_slope_sums(res.loss, *kept(), a)] if in_memory is not None  # in blocks each try is a pass
                 else rows.map(functools.partial(_slope_block, res, hi, lo, step, a)))
        return math.fsum(np.concatenate(parts)) / rows.n + outer(a)

    f0 = float(grad @ step)
    if not f0 < 0:
        return 0.0, None
    new_hi, new_lo = res.point(*_advance(hi, lo, step))
    ahead = _evaluate(rows, res, new_hi, new_lo, eager, step, rowwise(new_hi))
    f1 = ahead.slope + outer(1.0)
    if not math.isfinite(f1):  # an overflowed step: no slope can be formed
        return 0.0, None
    if f1 <= 0:
        return 1.0, ahead if ahead.hessian is not None else None
    lo_a, hi_a, flo, fhi = 0.0, 1.0, f0, f1
    for i in range(80):  # a try is a pass in blocks, the same tries on both routes
        # Regula falsi while it makes progress, bisection otherwise.
        a = lo_a - flo * (hi_a - lo_a) / (fhi - flo) if math.isfinite(fhi) and i % 3 != 2 else 0.5 * (lo_a + hi_a)
        if not lo_a < a < hi_a:
            a = 0.5 * (lo_a + hi_a)
        fa = slope(a)
        if 0.1 * f0 <= fa <= 0:
            return a, None
        if fa <= 0:
            lo_a, flo = a, fa
        else:
            hi_a, fhi = a, fa
        if hi_a - lo_a <= 1e-15 * hi_a:
            break
    return lo_a, None


def certified_distance(tau: float, r: float, mu: float) -> float:
    """-ln(1 - q)/r with q = r tau/mu: the farthest a point with ||grad F|| <= tau lies from the minimiser of F
    when the curvature is at least mu (module docstring); inf when q >= 1, tau/mu in the limit r -> 0."""
    q = r * tau / mu if mu > 0 else math.inf
    if not q < 1:
        return math.inf
    return -math.log1p(-q) / r if r > 0 else tau / mu


def _certify(hi: Array, lo: Array, H: Array, grad_bound: float, tau: float, r: float, lam_reg: float,
             loss: Loss, it: int, n: int, d: int) -> FitResult | None:
    """The result when the true gradient norm is at most tau (grad_bound: the computed norm plus its rounding
    bound) and the existence certificate q = r tau / mu <= 1/2 holds, mu the smallest eigenvalue of H(theta) +
    lam_reg less the Hessian's rounding bound (module docstring); else None."""
    if not grad_bound <= tau:
        return None
    vals = eigh(H, eigvals_only=True)
    lmin, lmax = float(max(vals[0], 0.0)), float(vals[-1])
    mu = lmin - hessian_error(n, d, loss.h2_sup * r * r, r, tau) + lam_reg
    if not (mu > 0 and r * tau / mu <= 0.5):
        return None
    distance = certified_distance(tau, r, mu)
    return FitResult(
        status=MINIMISER,
        diagnosis="theta is the minimiser of (1), certified by its gradient norm and Hessian",
        theta=hi,
        theta_lo=lo,
        hessian=H,
        eigenvalues=vals,
        lambda_min=lmin,
        lambda_max=lmax,
        kappa=(lmax + lam_reg) / (lmin + lam_reg),
        grad_norm=grad_bound,
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
        status=status, diagnosis=why, theta=nan, theta_lo=nan, hessian=np.full((d, d), np.nan), eigenvalues=nan,
        lambda_min=0.0, lambda_max=math.nan, kappa=math.inf, grad_norm=math.nan, distance=math.inf,
        iterations=0, grad_tol=tau, lam_reg=float(lam_reg), n=n, d=d,
    )


def _stall_message(it: int, grad_norm: float, tau: float, theta: Array) -> str:
    return (f"no certified minimiser after {it} Newton steps (gradient norm {grad_norm:.2e}, tolerance {tau:.1e}): "
            "the fit's curvature is too small to certify (nearly collinear columns, or no minimiser at all); "
            "drop redundant columns or set a positive lambda_reg")


def _separable_message(everyone: bool) -> str:
    which = "every training point is classified correctly" if everyone else "no point is misclassified"
    return (
        f"the logistic loss has no minimiser: the labels are separable ({which} by a linear rule), so the "
        "coefficients grow without bound; set a positive lambda_reg or remove the separating feature"
    )
