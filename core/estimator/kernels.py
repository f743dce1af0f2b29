"""Compiled loops (numba): the recursions, bit for bit those of core.mechanisms.recursion, and the fit's weighted Gram.

The count N, the powers R^k, the trajectory and the boundary chain of Algorithms 2 and 6 iterate a
scalar recursion up to N ~ n times, which costs about 2 us a step as Python calls; the trajectory of
(12) evaluates its closed form N times. These are the same loops compiled, with the same operations
in the same order: no fastmath (so no reassociation and no fused multiply-add), IEEE division, sqrt
by the correctly rounded machine instruction, and expm1, exp and log1p by the same libm functions
CPython's math module calls. The results are therefore identical to the pure-Python loops of
core.mechanisms.recursion, which remain the reference (and the fallback without numba, or with PSP_NO_JIT=1).

A decreasing recursion is passed as (kind, params): DOWN is (10) with params (c1, lam_reg/rho, lam_reg,
8 alpha r G0/n, r/(2 alpha r), G1/n), as hoisted in core.mechanisms.recursion.down_recursion; SMOOTH is the
recursion of Corollary 6.2 with params (8 G0 G2, n, G1/n, lam_reg, 0, 0). Every constant is a public
float, so one compiled function serves every geometry; cache=True keeps the machine code in
__pycache__ between processes.

The weighted Gram (gram_rows) is a sum, not a recursion: it may reassociate, since a sum of m terms has
the same rounding bound in any order; it differs from core.estimator.fit's BLAS blocks in the last bits only.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from core.estimator.rounding import SPLIT

DOWN = 0
SMOOTH = 1

jit = numba.njit(cache=True, nogil=True)


@jit
def step(kind: int, p: tuple[float, ...], lam: float) -> float:
    """One step R(lam) of (10) (kind DOWN) or of Corollary 6.2 (kind SMOOTH)."""
    if kind == DOWN:
        c1, reg_over_rho, lam_reg, k8, r_over_2ar, G1_n = p
        if lam <= 0 or lam + reg_over_rho < c1:
            return 0.0
        arg = 1.0 - k8 / (lam + lam_reg)
        if arg < 0:
            return 0.0
        out = lam * (1.0 - math.expm1((1.0 - arg) / (1.0 + math.sqrt(arg)) * r_over_2ar)) - G1_n
        return out if out > 0 else 0.0
    k, n, G1_n, lam_reg = p[0], p[1], p[2], p[3]
    nll = n * lam * lam
    if nll <= 0:
        return lam_reg
    arg = 1.0 - k / nll
    if arg < 0:
        return lam_reg
    out = 0.5 * lam * (1.0 + math.sqrt(arg)) - G1_n
    return lam_reg if lam_reg > out else out  # Python's max(out, lam_reg)


@jit
def count(kind: int, p: tuple[float, ...], floor: float, lam: float, max_steps: int) -> int:
    """N = min{N >= 1 : R^N(lam) <= floor}, or -1 beyond max_steps."""
    x, k = step(kind, p, lam), 1
    while x > floor:
        x, k = step(kind, p, x), k + 1
        if k > max_steps:
            return -1
    return k


@jit
def power(kind: int, p: tuple[float, ...], floor: float, lam: float, k: int) -> float:
    """R^k(lam), stopping early once the floor is reached."""
    for _ in range(k):
        if lam <= floor:
            return lam
        lam = step(kind, p, lam)
    return lam


@jit
def trajectory(kind: int, p: tuple[float, ...], floor: float, lam: float) -> np.ndarray:
    """lam, R(lam), ..., down to the first iterate at or below the floor."""
    out = np.empty(64)
    out[0] = lam
    size = 1
    while size == 1 or out[size - 1] > floor:
        if size == out.size:
            out = np.concatenate((out, np.empty(out.size)))
        out[size] = step(kind, p, out[size - 1])
        size += 1
    return out[:size]


@jit
def _ulp(x: float) -> float:
    """math.ulp for finite x."""
    x = abs(x)
    up = math.nextafter(x, math.inf)
    return x - math.nextafter(x, -math.inf) if math.isinf(up) else up - x


@jit
def preimage(
    kind: int, p: tuple[float, ...], floor: float, accelerating: bool, y: float, x: float, tol_ulps: float
) -> float:
    """sup{lam : R(lam) <= y} from below, as DecreasingRecursion._preimage; nan if not converged."""
    lo, hi = y, math.inf
    xp = fp = math.nan
    for i in range(300):
        fx = step(kind, p, x) - y
        if fx <= 0:
            lo = x if x > lo else lo
            if accelerating and fx + y > floor:
                hi = x - fx if x - fx < hi else hi
        else:
            hi = x if x < hi else hi
        if hi < math.inf and hi - lo <= tol_ulps * _ulp(hi):
            return lo
        slope = (fx - fp) / (x - xp) if i > 0 and x != xp else 1.0
        x_next = x - fx / slope if slope > 0 else math.nan
        xp, fp = x, fx
        if i >= 8 or not lo < x_next <= hi or x_next == x:
            x_next = lo + 0.5 * (hi - lo) if hi < math.inf else y + 2.0 * (x - y)
        x = x_next
    return math.nan


@jit
def extend_chain(
    kind: int,
    p: tuple[float, ...],
    floor: float,
    scale: float,
    accelerating: bool,
    tail: np.ndarray,
    have: int,
    m: int,
    tol_ulps: float,
) -> tuple[np.ndarray, bool]:
    """The boundary points mu_have, ..., mu_(m-1) after a chain of `have` ending in `tail` (its last <= 3).

    As DecreasingRecursion._extend_chain; (points computed, False) if a preimage did not converge.
    """
    out = np.empty(m - have)
    c3 = tail[-3] if tail.size >= 3 else math.nan  # chain[-3], chain[-2], chain[-1]
    c2 = tail[-2] if tail.size >= 2 else math.nan
    c1 = tail[-1] if tail.size >= 1 else math.nan
    size, j = have, 0
    lower = scale * 1e-9
    while size < m:
        if size == 0:
            x = preimage(kind, p, floor, accelerating, floor, floor + scale, tol_ulps)
        else:
            y = c1
            if size >= 3:
                guess = 2.0 * (y - c2) - (c2 - c3)
            else:
                guess = y - (c2 if size == 2 else floor)
            x = preimage(kind, p, floor, accelerating, y, y + (lower if lower > guess else guess), tol_ulps)
        if math.isnan(x):
            return out[:j], False
        out[j] = x
        j, size = j + 1, size + 1
        c3, c2, c1 = c2, c1, x
    return out, True


@jit
def affine_power(growth: float, b: float, cap: float, lam: float, k: int) -> float:
    """R^k(lam) of (12) in closed form, as AffineIncreasingRecursion.power."""
    if k <= 0 or lam >= cap:
        if k <= 0:
            return lam
        return cap if cap < lam else lam
    c = b / growth
    log_gain = k * math.log1p(growth)
    if log_gain > 700.0:
        return cap
    out = math.exp(log_gain) * (lam + c) - c
    return cap if cap < out else out  # Python's min(out, cap)


@jit
def affine_trajectory(growth: float, b: float, cap: float, lam: float, N: int) -> np.ndarray:
    """R^0(lam), ..., R^N(lam) of (12), as AffineIncreasingRecursion.trajectory."""
    out = np.empty(N + 1)
    for k in range(N + 1):
        out[k] = affine_power(growth, b, cap, lam, k)
    return out


GRAM_ROWS = 128  # rows per block of gram_rows: the block's two transposed copies (2 x 17 kB at d = 17) stay in L1


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def gram_rows(X: np.ndarray, w: np.ndarray, r0: int, r1: int, out: np.ndarray) -> None:
    """out = sum over rows r0 <= i < r1 of w_i x_i x_i^T, upper triangle (the lower one is left 0).

    Each block of GRAM_ROWS rows is copied transposed (x and w x), so that every entry is a dot product of
    two contiguous vectors, which the compiler vectorises once it may reassociate; nogil lets threads share X.
    """
    d = X.shape[1]
    W = np.empty((d, GRAM_ROWS))
    V = np.empty((d, GRAM_ROWS))
    acc = np.zeros((d, d))
    for lo in range(r0, r1, GRAM_ROWS):
        m = min(GRAM_ROWS, r1 - lo)
        for i in range(m):
            s = w[lo + i]
            for j in range(d):
                x = X[lo + i, j]
                W[j, i] = x
                V[j, i] = x * s
        for j in range(d):
            for k in range(j, d):
                a = 0.0
                for i in range(m):
                    a += V[j, i] * W[k, i]
                acc[j, k] += a
    out[:] = acc


RESIDUAL_ROWS = 256  # rows per block of residual_rows: the block's transposed copy stays in L1


@jit
def residual_rows(X: np.ndarray, y: np.ndarray, hi: np.ndarray, lo: np.ndarray, centred: bool, r0: int, r1: int,
                  out: np.ndarray) -> None:
    """out_i = x_i^T (hi + lo) - y_i (centred) or x_i^T (hi + lo), for r0 <= i < r1, in compensated arithmetic.

    Dot2 of Ogita, Rump & Oishi (2005) with Dekker's error-free product (no fused multiply-add, so the same
    bits on every processor): the result is as if computed in twice the working precision, then rounded,
    |out_i - exact| <= u |exact| + gamma_(2d+1)^2 (|y_i| + sum_j |x_ij theta_j|) (core.estimator.fit.residual_error).
    The x_ij lo_j products are added to the error term: their own rounding is of order u^2 |x_ij hi_j|.
    Rows are taken GRAM-style, a transposed block at a time, so the loop over a block's rows vectorises
    without reassociating anything.
    """
    d = X.shape[1]
    hh, hl = np.empty(d), np.empty(d)
    for j in range(d):
        c = SPLIT * hi[j]
        hh[j] = c - (c - hi[j])
        hl[j] = hi[j] - hh[j]
    W = np.empty((d, RESIDUAL_ROWS))
    S, C = np.empty(RESIDUAL_ROWS), np.empty(RESIDUAL_ROWS)
    for b0 in range(r0, r1, RESIDUAL_ROWS):
        m = min(RESIDUAL_ROWS, r1 - b0)
        for i in range(m):
            for j in range(d):
                W[j, i] = X[b0 + i, j]
            S[i] = -y[b0 + i] if centred else 0.0
            C[i] = 0.0
        for j in range(d):
            b, bh, bl, blo = hi[j], hh[j], hl[j], lo[j]
            for i in range(m):
                a = W[j, i]
                p = a * b
                t = SPLIT * a
                ah = t - (t - a)
                al = a - ah
                e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)  # a b = p + e exactly
                s = S[i]
                s2 = s + p
                z = s2 - s
                q = (s - (s2 - z)) + (p - z)  # s + p = s2 + q exactly
                S[i] = s2
                C[i] += q + e + a * blo
        for i in range(m):
            out[b0 + i] = S[i] + C[i]


def warm() -> None:
    """Compile (or load from numba's cache) every kernel at the argument types its callers pass: a recursion's
    (int, 6 floats), floats, ints, a bool and C-ordered float64 arrays. tests/test_kernels_build.py checks that a
    release afterwards adds no signature."""
    p = (0.5, 0.0, 0.0, 1e-3, 0.5, 1e-4)
    for kind in (DOWN, SMOOTH):
        count(kind, p, 0.1, 1.0, 10)
        power(kind, p, 0.1, 1.0, 2)
        trajectory(kind, p, 0.1, 1.0)
        extend_chain(kind, p, 0.1, 0.01, kind == DOWN, np.empty(0), 0, 2, 8.0)
    affine_power(0.1, 0.1, 2.0, 1.0, 3)
    affine_trajectory(0.1, 0.1, 2.0, 1.0, 3)
    X, w, y = np.ones((4, 2)), np.ones(4), np.ones(4)
    gram_rows(X, w, 0, 4, np.empty((2, 2)))
    for centred in (True, False):
        residual_rows(X, y, np.ones(2), np.zeros(2), centred, 0, 4, np.empty(4))
