"""The floating-point error bounds the certificates rest on (docs/privacy.md, "The fit's tolerance").

Every quantity here is a public function of n, d, the loss and the domain's radius r: the fit's tolerance
tau, the rounding of a residual and of the Hessian's eigenvalues, the floor of stage 1's count, and the largest
response bound the fit certifies. core.estimator.fit checks its own computed gradient against these bounds;
core.mechanisms.recursion and core.mechanisms.certificates widen the counts of Algorithms 2 and 4 by them, so that no
count depends on rounding.
"""

from __future__ import annotations

import math

import numpy as np

from core.estimator.losses import Loss

GRAD_TOL = 1e-12  # the solver's target: ||grad F|| <= GRAD_TOL * G0 (computed)
TAU_FACTOR = 2e-12  # the certified bound tau = TAU_FACTOR * G0 allows for the rounding of the computed gradient
SUM_BLOCK = 4096  # rows per block of the gradient sum: rounding <= gamma_4098 ~ 4.6e-13 relative to G0
UNIT = 2.0**-53  # the unit roundoff of float64
SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter, a double into two halves of 26 bits (Dekker's product)
PLAIN_SHARE = 1e-13  # plain residuals while their rounding moves h' by at most this share of sup|h'|
H1_ROUNDING = 8.0 * UNIT  # h' as computed from an exact residual: tanh or expit, 0.5 z and y times it


def gamma(k: int) -> float:
    """gamma_k = k u/(1 - k u), u = 2^-53: the classical bound on the relative rounding of k operations."""
    return k * UNIT / (1.0 - k * UNIT)


def residual_error(d: int, size: float | np.ndarray, compensated: bool) -> float | np.ndarray:
    """A bound on |computed z_i - z_i| beyond 2^-53 |z_i|, for rows with |y_i| + sum_j |x_ij theta_j| <= size:
    gamma_(d+1) size for the plain product and gamma_(2d+1)^2 size for Dot2 (Ogita, Rump & Oishi 2005,
    Proposition 5.5: |Dot2 - x^T y| <= u |x^T y| + gamma_N^2 |x|^T |y| for N terms)."""
    return (gamma(2 * d + 1) ** 2 if compensated else gamma(d + 1)) * size


def hessian_error(n: int, d: int, G1: float, r: float, tau: float) -> float:
    """A public bound on |computed eigenvalue of H(theta~) - the same eigenvalue of the exact H(theta~)|.

    The weighted Gram of n rows errs by gamma_(gram_depth(n) + 2) G1 in the spectral norm (a sum whose every term
    passes through at most k additions errs by gamma_k times the sum of magnitudes, in any order; the norm of
    (1/n) sum w_i |x_i| |x_i|^T is at most its trace, sum w_i ||x_i||^2 / n <= G1); the
    weights h'' by at most the gradient's per-row error h1_err plus 4 u (so r^2 h1_err <= r tau at a certified
    point, and 4 u r^2); the symmetric eigensolver by 10 d^2 u ||H|| (a backward-stable method, generously).
    """
    return (gamma(gram_depth(n) + 2) + 10.0 * d * d * UNIT) * G1 + 4.0 * UNIT * r * r + r * tau


def gram_depth(n: int) -> int:
    """How many additions a term of core.estimator.fit.weighted_gram passes through, at most: the compiled kernel adds
    128 rows of a block, then a range's n/1024 blocks in turn, then 8 ranges; BLAS adds 2^15 rows of a chunk, then the
    n/2^15 chunks in turn. Both stay below 2^15 + n/2^10 + 64. Rows read in blocks (core.estimator.blocks) are summed so
    within each block, whose rows number at most n - 2^12 when there are two or more, and the blocks' sums are added
    exactly with one rounding: at most 2^15 + n/2^10 - 4 + 64 + 1 additions."""
    return 2**15 + n // 2**10 + 64


def eigen_error(n: int, d: int, G1: float, r: float, tau: float) -> float:
    """A public bound on |lambda_min(computed H(theta~)) - lambda_min(H(theta(P_n)))| for a certified fit.

    hessian_error, plus the move from theta~ to the exact minimiser: H(theta~) lies within e^(+-r l) of
    H(theta(P_n)) (l the certified distance, r l <= ln 2 as q <= 1/2), so the smallest eigenvalue moves by at
    most (e^(r l) - 1) 2 lambda~ <= 2 (2 r l) lambda~ <= 4 (2 ln 2 q) mu = 5.55 r tau, taken as 6 r tau.
    """
    return hessian_error(n, d, G1, r, tau) + 6.0 * r * tau


def ratio_error(n: int, G1: float, r: float, tau: float) -> float:
    """A public xi with e^(2 r l) - 1 <= xi for every certified fit whose lambda_min + lam_reg >= count_floor:
    lambda_max of the computed Hessian, raised by e^(r l), is then within a factor 1 + xi of lambda_max(P_n).
    q <= r tau / floor and r l <= -ln(1 - q)."""
    q = r * tau / count_floor(n, G1)
    return math.expm1(-2.0 * math.log1p(-q))


def count_slack(n: int, d: int, G1: float, r: float, G0: float) -> tuple[float, float]:
    """(shift, floor) of stage 1's widened recursion (core.mechanisms.recursion.down_recursion): R - 2 e, and 0 at or
    below zeta (eigen_error, count_floor), for the fit's tolerance tau = TAU_FACTOR G0."""
    return 2.0 * eigen_error(n, d, G1, r, TAU_FACTOR * G0), count_floor(n, G1)


def up_slack(n: int, d: int, G1: float, r: float, G0: float) -> tuple[float, float]:
    """(xi, 4 e_H) of stage 2's widened recursion (core.mechanisms.recursion.up_recursion): (1 + xi) R + 4 e_H."""
    tau = TAU_FACTOR * G0
    return ratio_error(n, G1, r, tau), 4.0 * hessian_error(n, d, G1, r, tau)


CAPACITY_SHARE = 4e-13  # of sup|h'|: what the residuals' rounding may cost h' at the largest admissible iterate


def response_capacity(n: int, d: int, loss: Loss) -> float:
    """The largest public response bound B for which the fit certifies every data set of n rows in dimension d
    with |y_i| <= B and lambda_min + lam_reg above count_floor (docs/privacy.md, "The fit's tolerance").

    From such a start every iterate has F <= F(0), and F(0) - min F <= mean (phi(y_i) - phi(0)) <= B (robust;
    log 2 for logistic labels), so ||theta|| <= 2 (r B'/mu + 1/r) with mu >= zeta = h''_sup r^2/(2n): every row
    has |y_i| + |x_i|^T |theta| <= B + 2 (2 n B'/h''_sup + 1). Dot2 rounds a residual of that size by at most
    gamma_(2d+1)^2 times it, which must cost h' at most CAPACITY_SHARE (with the block sums' gamma_4098 and h''s
    own rounding, the gradient's whole error then stays below tau - GRAD_TOL G0). inf for the logistic loss
    whenever its labels' B' = log 2 passes (they are clipped to nothing: they are +-1).
    """
    room = CAPACITY_SHARE * loss.h1_sup / (loss.h2_sup * gamma(2 * d + 1) ** 2)
    if not loss.centred:
        return math.inf if 1.0 + 2.0 * (2.0 * n * math.log(2.0) / loss.h2_sup + 1.0) <= room else 0.0
    return max(0.0, (room - 2.0) / (1.0 + 4.0 * n / loss.h2_sup))


def count_floor(n: int, G1: float) -> float:
    """zeta = G1/(2n): the floor of stage 1's recursion (docs/privacy.md, "Data with no minimiser"). Below one
    step G1/n of (10), so it changes a count by at most 1; every data set whose lambda_min + lam_reg exceeds it
    is certified by the fit (within the declared response bound)."""
    return G1 / (2.0 * n)
