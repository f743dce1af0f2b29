"""DP-SGD for the GLM losses (docs/method.md §8), a comparison method for u^T theta.

Abadi et al. (2016), "Deep learning with differential privacy": each of T steps draws a Poisson
sample (every record independently with probability q), clips each per-example gradient to l2 norm
C, sums them, adds N(0, z^2 C^2 I) and divides by the expected batch size q n. For a GLM the
per-example gradient is h'(<theta, x_i>, y_i) x_i, so its norm is |h'| ||x_i|| and clipping is a
per-example weight: no d-by-batch gradient matrix is formed.

Privacy. The whole trajectory is the T-fold composition of the Poisson-subsampled Gaussian
mechanism with noise multiplier z; dp_accounting's RDP accountant (Mironov 2017; Mironov, Talwar &
Zhang 2019) or PLD accountant (Meiser & Mohammadi 2018; Koskela et al. 2020; Doroshenko et al.
2022) converts it to (eps, delta), and `calibrate_noise_multiplier` finds the smallest z meeting the
target. Releasing u^T theta_hat (final or averaged iterate) is post-processing. n is public, as
everywhere in the project. The standard DP-SGD guarantee is for add/remove-one neighbours; the
paper's neighbours replace one record (n fixed). `neighbours="replace_one"` accounts for that
relation directly (PLD accountant only: the RDP accountant has no replace-one analysis of Poisson
sampling). The two differ: replacing a record can move the clipped sum by 2C, and at sampling
rates q >= 0.01 the add/remove calibration can leave the replace-one epsilon up to twice the target,
so like-for-like comparisons with the paper's methods need neighbours="replace_one".

Defaults (DPSGDConfig): C = 1, expected batch 1000, T = 1000, constant step 1/(G1 + lambda_reg),
average of the last half of the iterates, start at 0, PLD accountant with replace-one neighbours:
the paper's notion, so that every method in a comparison carries the same guarantee.

Speed. The randomness (batch sizes, the uniform stream the batches are taken from, Gaussian
noise) is drawn by the numpy Generator ahead of the steps, a block at a time; the arithmetic on it
(dropping repeated indices from the batches, gathers, clipped weighted sums, updates, averaging) is
compiled by numba when the project's kernels are on (core.estimator.compiled.jit: numba importable,
PSP_NO_JIT unset), with the machine code cached in core/__pycache__; otherwise it runs as NumPy.
Both paths take the same draws and form the same batches, so for a given generator state they give
theta_hat to rounding (about 1e-16 relative; tests/test_dp_sgd.py checks 1e-12): only the order of
the sums' terms and the last bits of h' differ.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from dp_accounting.dp_event import DpEvent
    from dp_accounting.privacy_accountant import PrivacyAccountant

from core.errors import BudgetError, is_integer, is_real
from core.estimator.compiled import jit
from core.estimator.losses import Loss
from core.estimator.problem import Problem
from core.mechanisms.release import BaselineRelease, unit_direction
from core.mechanisms.trial import Draw, Trial, of_release
from core.privacy.gaussian import check_epsilon_delta

ACCOUNTANTS = ("rdp", "pld")
NEIGHBOURS = {"add_remove": "ADD_OR_REMOVE_ONE", "replace_one": "REPLACE_ONE"}  # dp_accounting's NeighboringRelation
# PLD grid width: the accountant rounds pessimistically, so a coarser grid only overstates epsilon
# (by ~1e-4 at T = 1000) while each evaluation is ten times faster than at the library's 1e-4.
PLD_DISCRETIZATION = 1e-3
CALIBRATION_RTOL = 1e-6  # relative precision of the calibrated noise multiplier
_BRACKET_STEPS = 60  # halvings/doublings of z allowed while bracketing the target epsilon
CHUNK = 128  # rows of a batch the compiled steps load ahead at once (see _compiled_steps)
SAMPLE_BLOCK = 1 << 20  # batch indices drawn at once (8 MB of int64 keys): the whole default run at n = 10^6


@dataclass(frozen=True)
class DPSGDConfig:
    """Hyper-parameters of DP-SGD; all are public and validated on construction.

    Attributes
    ----------
    clip_norm : C, the per-example gradient clipping norm (default 1.0, the per-coordinate gradient
        bound G0/sqrt(d) on the cube). C = G0 would make clipping vacuous (|h'| <= 1, ||x||_2 <= r)
        at sqrt(d) times the noise. Clipping a GLM gradient replaces h(., y_i) by a convex loss whose
        derivative is capped at C/||x_i||, so DP-SGD converges to the minimiser of that surrogate,
        which differs from theta(P_n) wherever clipping is active at theta(P_n). When the sampling
        noise of the batches dominates the privacy noise (large n), a larger C, up to G0, removes
        that bias at little cost; choosing C from the data is not private.
    batch_size : expected batch size b (default 1000); the sampling rate is q = min(1, b/n).
    steps : T, the number of noisy gradient steps (default 1000: one pass over the data at n = 10^6,
        and well under a second at d = 17).
    learning_rate : constant step size; None (default) takes 1/(G1 + lambda_reg), one over the
        public smoothness bound of the objective, which clipping can only lower: a step that cannot
        diverge whatever the data. A constant step with tail averaging needs no decay schedule.
    average_fraction : theta_hat is the mean of the last ceil(f T) iterates (at least one; f = 0
        gives the final iterate). Default 0.5: averaging cancels most of the step noise
        (Polyak & Juditsky 1992) once the first half has forgotten the start.
    accountant : "pld" (default; needed for replace-one) or "rdp" (faster, add/remove only).
    neighbours : "replace_one" (default; the paper's notion, as for every other method here) or
        "add_remove" (the usual DP-SGD guarantee, which at q >= 0.01 can be twice as weak under
        replace-one).

    The start is theta = 0, a data-independent point.
    """

    clip_norm: float = 1.0
    batch_size: int = 1000
    steps: int = 1000
    learning_rate: float | None = None
    average_fraction: float = 0.5
    accountant: str = "pld"
    neighbours: str = "replace_one"

    def __post_init__(self) -> None:
        if not (is_real(self.clip_norm) and self.clip_norm > 0):
            raise BudgetError(f"clip_norm must be a positive finite number, got {self.clip_norm!r}")
        if not (is_integer(self.batch_size) and self.batch_size >= 1):
            raise BudgetError(f"batch_size (the expected batch size) must be an integer >= 1, got {self.batch_size!r}")
        if not (is_integer(self.steps) and self.steps >= 1):
            raise BudgetError(f"steps must be an integer >= 1, got {self.steps!r}")
        lr = self.learning_rate
        if lr is not None and not (is_real(lr) and lr > 0):
            raise BudgetError(f"learning_rate must be a positive finite number or None (for 1/(G1 + lambda_reg)), "
                             f"got {lr!r}")
        f = self.average_fraction
        if not (is_real(f) and 0 <= f <= 1):
            raise BudgetError(f"average_fraction must lie in [0, 1] (0 = final iterate), got {f!r}")
        _check_accounting(self.accountant, self.neighbours)

    def sampling_rate(self, n: int) -> float:
        """q = b/n, capped at 1."""
        return min(1.0, self.batch_size / n)

    def averaged_steps(self) -> int:
        """How many final iterates are averaged: ceil(f T), at least one."""
        return max(1, math.ceil(self.average_fraction * self.steps))


def _check_accounting(accountant: str, neighbours: str) -> None:
    """Raise BudgetError for an unknown accountant or neighbour relation, or an unsupported pair."""
    if accountant not in ACCOUNTANTS:
        raise BudgetError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got {accountant!r}")
    if neighbours not in NEIGHBOURS:
        raise BudgetError(f"neighbours must be one of {', '.join(NEIGHBOURS)}, got {neighbours!r}")
    if neighbours == "replace_one" and accountant != "pld":
        raise BudgetError("neighbours='replace_one' needs accountant='pld': the RDP accountant analyses "
                         "Poisson sampling for add/remove neighbours only")


def _make_accountant(accountant: str, neighbours: str) -> PrivacyAccountant:
    # dp_accounting is imported when an accountant is first needed: a second of every other process's start.
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.rdp import rdp_privacy_accountant

    relation = NeighboringRelation[NEIGHBOURS[neighbours]]
    if accountant == "rdp":
        return rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation)
    return pld_privacy_accountant.PLDAccountant(relation, value_discretization_interval=PLD_DISCRETIZATION)


def dp_sgd_event(z: float, sampling_rate: float, steps: int) -> DpEvent:
    """T-fold composition of the Poisson-subsampled Gaussian mechanism with noise multiplier z."""
    from dp_accounting import dp_event

    gaussian = dp_event.GaussianDpEvent(z)
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(sampling_rate, gaussian), steps)


def _check_schedule(sampling_rate: float, steps: int) -> None:
    if not (is_real(sampling_rate) and 0 < sampling_rate <= 1):
        raise BudgetError(f"the sampling rate must lie in (0, 1], got {sampling_rate!r}")
    if not (is_integer(steps) and steps >= 1):
        raise BudgetError(f"the number of steps must be an integer >= 1, got {steps!r}")


@lru_cache(maxsize=512)
def dp_sgd_epsilon(z: float, delta: float, sampling_rate: float, steps: int, accountant: str = "pld",
                   neighbours: str = "replace_one") -> float:
    """The accountant's epsilon at `delta` for T steps of DP-SGD with noise multiplier z."""
    if not (is_real(z) and z > 0):
        raise BudgetError(f"the noise multiplier must be a positive finite number, got {z!r}")
    if not (is_real(delta) and 0 < delta < 1):
        raise BudgetError(f"delta for DP-SGD must lie strictly between 0 and 1, got {delta!r}")
    _check_schedule(sampling_rate, steps)
    _check_accounting(accountant, neighbours)
    acc = _make_accountant(accountant, neighbours)
    return float(acc.compose(dp_sgd_event(z, sampling_rate, steps)).get_epsilon(delta))


def _bracket(epsilon: float, delta: float, sampling_rate: float, steps: int, accountant: str,
             neighbours: str) -> tuple[float, float]:
    """(lo, hi) with hi = 2 lo, epsilon(lo) > target >= epsilon(hi), by doubling or halving from z = 1."""

    def meets(z: float) -> bool:
        return dp_sgd_epsilon(z, delta, sampling_rate, steps, accountant, neighbours) <= epsilon

    z = 1.0
    up = not meets(z)
    for _ in range(_BRACKET_STEPS):
        nxt = 2.0 * z if up else 0.5 * z
        if meets(nxt) == up:
            return (z, nxt) if up else (nxt, z)
        z = nxt
    raise BudgetError(f"no noise multiplier between 2^-{_BRACKET_STEPS} and 2^{_BRACKET_STEPS} meets "
                      f"(epsilon, delta) = ({epsilon}, {delta}) at q = {sampling_rate}, T = {steps}")


@lru_cache(maxsize=256)
def calibrate_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int,
                               accountant: str = "pld", neighbours: str = "replace_one") -> float:
    """The smallest noise multiplier z (to relative precision 1e-6) making DP-SGD (eps, delta)-DP.

    mechanism_calibration.calibrate_dp_mechanism runs Brent's method on the accountant's epsilon
    and, if the root it finds overshoots the target, moves it up by the tolerance or bisects, so the
    returned z always satisfies epsilon(z) <= target. The result depends only on public parameters,
    hence the cache.
    """
    check_epsilon_delta(epsilon, delta, "DP-SGD")
    _check_schedule(sampling_rate, steps)
    _check_accounting(accountant, neighbours)
    from dp_accounting import mechanism_calibration

    lo, hi = _bracket(epsilon, delta, sampling_rate, steps, accountant, neighbours)
    z = mechanism_calibration.calibrate_dp_mechanism(
        lambda: _make_accountant(accountant, neighbours),
        lambda x: dp_sgd_event(x, sampling_rate, steps),
        epsilon,
        delta,
        mechanism_calibration.ExplicitBracketInterval(lo, hi),
        tol=CALIBRATION_RTOL * lo,
    )
    return float(z)


def poisson_batch(rng: np.random.Generator, n: int, q: float) -> NDArray[np.intp]:
    """Indices of a Poisson sample: each of n records independently with probability q.

    The size is Binomial(n, q) and, given the size, the set is uniform without replacement, which is
    the same distribution as n independent coin flips at O(batch) rather than O(n) cost.
    """
    size = int(rng.binomial(n, q))
    return rng.choice(n, size=size, replace=False)


def poisson_batches(rng: np.random.Generator, n: int, q: float, steps: int) -> tuple[NDArray[np.intp], list[int]]:
    """`steps` independent Poisson samples at rate q, as poisson_batch draws them, all at once.

    Returns the batches' indices end to end and the offsets where each starts (steps + 1 of them).
    Each size k is Binomial(n, q); given k, the batch is the set of the first k distinct values of an
    i.i.d. uniform stream on range(n), a uniform k-subset (each new value is uniform over those not yet
    taken). The stream is consumed in rounds: one draw per missing slot, duplicates dropped. Above
    q = 1/2 the rounds would be long, so the batches are drawn one by one by poisson_batch.
    The duplicates are found by sorting (_distinct_by_sorting) or, compiled, by marking
    (DISTINCT_KERNEL); both consume the same stream and give each batch the same set of indices.
    """
    if q > 0.5:
        batches = [poisson_batch(rng, n, q) for _ in range(steps)]
        return np.concatenate(batches), [0, *np.cumsum([b.size for b in batches]).tolist()]
    sizes = rng.binomial(n, q, size=steps)
    offsets = [0, *np.cumsum(sizes).tolist()]
    if DISTINCT_KERNEL is None:
        return _distinct_by_sorting(rng, n, sizes, offsets), offsets
    out, filled = np.empty(offsets[-1], dtype=np.int64), np.zeros(steps, dtype=np.int64)
    seen = np.zeros(n // 64 + 1, dtype=np.int64)
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    need = sizes
    while need.any():
        DISTINCT_KERNEL(rng.integers(0, n, size=int(need.sum())), need, starts, out, filled, seen)
        need = sizes - filled
    return out, offsets


def _distinct_by_sorting(rng: np.random.Generator, n: int, sizes: NDArray, offsets: list[int]) -> NDArray[np.intp]:
    """poisson_batches' rounds with NumPy: batch t's keys t n + index, sorted, repeats dropped."""
    steps = sizes.size
    owner = np.arange(steps, dtype=np.int64) * n  # batch t's keys are t n + index: sorted by batch
    keys = np.sort(np.repeat(owner, sizes) + rng.integers(0, n, size=offsets[-1]))
    while True:
        keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]  # each batch's distinct indices
        need = sizes - np.bincount(keys // n, minlength=steps)
        if not need.any():
            break
        fresh = np.repeat(owner, need) + rng.integers(0, n, size=int(need.sum()))
        keys = np.sort(np.concatenate([keys, fresh]), kind="stable")  # timsort: one long run, merged in O(size)
    return keys % n


def _append_distinct(fresh: NDArray, need: NDArray, starts: NDArray, out: NDArray, filled: NDArray,
                     seen: NDArray) -> None:
    """One round of poisson_batches by marking: batch t appends the values of its share of `fresh`
    (need[t] of them, in batch order) that it does not hold yet; out[starts[t]:] holds its filled[t].

    `seen` is a bit set over range(n), all clear on entry and on return (n/8 bytes: it stays in
    cache where a sort of the stream would not): a batch sets its members' bits, keeps the values
    whose bit is clear, and clears its bits again.
    """
    pos = 0
    for t in range(need.size):
        if need[t] == 0:
            continue
        first, count = starts[t], filled[t]
        for k in range(first, first + count):
            seen[out[k] >> 6] |= 1 << (out[k] & 63)
        for v in fresh[pos : pos + need[t]]:
            bit = 1 << (v & 63)
            if seen[v >> 6] & bit == 0:
                seen[v >> 6] |= bit
                out[first + count] = v
                count += 1
        for k in range(first, first + count):
            seen[out[k] >> 6] = 0
        filled[t] = count
        pos += need[t]


def clipped_weights(t: NDArray, y: NDArray, row_norms: NDArray, loss: Loss, clip_norm: float) -> NDArray:
    """w with w_i x_i = g_i min(1, C/||g_i||) for g_i = h'(t_i, y_i) x_i, so ||w_i x_i|| <= C."""
    s = loss.d1(t, y)
    # ||g_i|| = |h'| ||x_i||; C / max(||g_i||, C) is 1 for short gradients and also for g_i = 0.
    return s * (clip_norm / np.maximum(np.abs(s) * row_norms, clip_norm))


def sgd_rows(problem: Problem) -> NDArray[np.float64]:
    """The rows (y_i, x_i, ||x_i||_2) in one array: a batch is one gather. Data only, NOT private.

    Nothing in it depends on the noise, so a comparison builds it once for all its draws. The
    scalars come first and last so that loading them touches every cache line of a row (d <= 6).
    """
    X = problem.X
    return np.column_stack([problem.y, X, np.sqrt(np.einsum("ij,ij->i", X, X))])


def dp_sgd_theta(problem: Problem, epsilon: float, delta: float, rng: np.random.Generator,
                 config: DPSGDConfig = DPSGDConfig(), rows: NDArray | None = None) -> tuple[NDArray[np.float64], float]:
    """DP-SGD on the problem's loss; returns (theta_hat, z). The trajectory is (eps, delta)-DP.

    The batches (poisson_batches) and the Gaussian noise are drawn ahead by the generator, a block of
    steps at a time (_block_draws); the steps themselves run compiled (_compiled_steps) or, without
    numba, with PSP_NO_JIT=1 or for a loss it has no derivative for, as NumPy (_numpy_steps). Both
    consume the same draws, so a seed gives the same theta_hat up to rounding either way.
    `rows` is sgd_rows(problem), passed to reuse it across draws.
    """
    loss, (n, d) = problem.geometry.loss, problem.X.shape
    lam = problem.fit.lam_reg
    q = config.sampling_rate(n)
    z = calibrate_noise_multiplier(epsilon, delta, q, config.steps, config.accountant, config.neighbours)
    lr = config.learning_rate if config.learning_rate is not None else 1.0 / (problem.geometry.G1 + lam)
    # Fixed denominator q n: the Poisson analysis needs it data-free.
    step = (lr, q * n, lam, config.clip_norm, config.steps - config.averaged_steps())
    rows = sgd_rows(problem) if rows is None else rows
    kind = _D1_KINDS.get(loss.name) if STEPS_KERNEL is not None else None
    theta, total = np.zeros(d), np.zeros(d)
    for first, idx, offsets, noise in _block_draws(rng, n, q, config.steps, z * config.clip_norm, d):
        if kind is None:
            _numpy_steps(rows, idx, offsets, noise, theta, total, first, step, loss)
        else:
            STEPS_KERNEL(rows, idx, offsets, noise, theta, total, first, step, kind)
    return total / config.averaged_steps(), z


def _block_draws(rng: np.random.Generator, n: int, q: float, steps: int, noise_sd: float,
                 d: int) -> Iterator[tuple[int, NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]]:
    """(first step, batch indices end to end, offsets, N(0, noise_sd^2 I) noise rows) per block of steps.

    Neither batches nor noise depend on the iterates, so drawing them ahead leaves their joint law
    unchanged; a block holds about SAMPLE_BLOCK indices, which bounds the memory of poisson_batches.
    """
    block = max(1, SAMPLE_BLOCK // max(1, math.ceil(q * n)))
    for first in range(0, steps, block):
        count = min(block, steps - first)
        idx, offsets = poisson_batches(rng, n, q, count)
        noise = noise_sd * rng.standard_normal((count, d))
        yield first, idx.astype(np.int64, copy=False), np.asarray(offsets, dtype=np.int64), noise


Step = tuple[float, float, float, float, int]  # learning rate, denominator q n, lambda_reg, C, first averaged step


def _numpy_steps(rows: NDArray, idx: NDArray, offsets: NDArray, noise: NDArray, theta: NDArray, total: NDArray,
                 first: int, step: Step, loss: Loss) -> None:
    """Steps first, first + 1, ... of DP-SGD on one block's draws, with NumPy; theta and total in place."""
    lr, denom, lam, C, keep_from = step
    d = theta.size
    for j in range(noise.shape[0]):
        batch = rows.take(idx[offsets[j] : offsets[j + 1]], axis=0)  # take: a faster gather than fancy indexing
        Xb = batch[:, 1 : d + 1]
        w = clipped_weights(Xb @ theta, batch[:, 0], batch[:, d + 1], loss, C)
        theta[:] = theta - lr * ((Xb.T @ w + noise[j]) / denom + lam * theta)  # lam * theta is data-independent
        if first + j >= keep_from:
            total += theta


_D1_KINDS = {"robust": 0, "logistic": 1}  # the losses _compiled_steps has h' for


def _compiled_steps(rows: NDArray, idx: NDArray, offsets: NDArray, noise: NDArray, theta: NDArray,
                    total: NDArray, first: int, step: Step, kind: int) -> None:
    """_numpy_steps as loops over each batch, without copying it, for the loss `kind` (_D1_KINDS).

    A batch is taken CHUNK rows at a time. A first loop loads each row's first and last entries
    (y_i and ||x_i||) into buffers: a short loop of independent loads, whose cache misses the CPU
    overlaps, where the longer second loop (margin, h', clipping, sum) would wait for them one row at
    a time; CHUNK rows (at most 16 kB at d = 5) then stay in the first-level cache for the second loop.
    The operations are those of _numpy_steps and core.estimator.losses up to the order of the sums' terms and
    the last bits of h': the robust h' -tanh(u/2), u = y - t, is -sign(u) (1 - e)/(1 + e) with
    e = exp(-|u|), within 2^-52 of it (absolute) at a third of the cost; the logistic h' -y expit(-y t)
    takes expit(m) = 1/(1 + exp(-m)), scipy's formula (exp(-m) = inf gives 0).
    """
    lr, denom, lam, C, keep_from = step
    d = theta.size
    ys, norms, grad = np.empty(CHUNK), np.empty(CHUNK), np.empty(d)
    for j in range(noise.shape[0]):
        grad[:] = 0.0
        for start in range(offsets[j], offsets[j + 1], CHUNK):
            size = min(CHUNK, offsets[j + 1] - start)
            for m in range(size):
                i = idx[start + m]
                ys[m], norms[m] = rows[i, 0], rows[i, d + 1]
            for m in range(size):
                i = idx[start + m]
                t = 0.0
                for c in range(d):
                    t += rows[i, c + 1] * theta[c]
                y = ys[m]
                if kind == 0:
                    e = math.exp(-abs(y - t))
                    s = (1.0 - e) / (1.0 + e)
                    s = -s if y - t >= 0 else s
                else:
                    s = -y * (1.0 / (1.0 + math.exp(y * t)))
                w = s * (C / max(abs(s) * norms[m], C))  # clipped_weights
                for c in range(d):
                    grad[c] += w * rows[i, c + 1]
        for c in range(d):
            theta[c] = theta[c] - lr * ((grad[c] + noise[j, c]) / denom + lam * theta[c])
        if first + j >= keep_from:
            total += theta


# The project's numba switch (core.estimator.compiled.jit: numba importable and PSP_NO_JIT unset); the
# machine code is cached on disk like the recursions'.
STEPS_KERNEL = jit(_compiled_steps)
DISTINCT_KERNEL = jit(_append_distinct)


def dp_sgd(problem: Problem, u: NDArray | int, epsilon: float, delta: float, rng: np.random.Generator,
           config: DPSGDConfig = DPSGDConfig(), rows: NDArray | None = None) -> BaselineRelease:
    """u^T theta_hat from DP-SGD; noise_scale is the noise multiplier z, as `compare` reports it.

    `rows` is sgd_rows(problem), passed to reuse it across draws.
    """
    start = time.perf_counter()
    uv = unit_direction(u, problem.d)
    theta, z = dp_sgd_theta(problem, epsilon, delta, rng, config, rows)
    return BaselineRelease("dp_sgd", float(uv @ theta), z, True, epsilon, delta, problem.fit.lam_reg,
                           time.perf_counter() - start, float(uv @ problem.fit.theta))


def dp_sgd_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """core.methods.registry's runner of DP-SGD; the rows' per-example terms are shared by the comparison's draws."""
    def draw(rng: np.random.Generator) -> Draw:
        return of_release(dp_sgd(t.problem, t.u, t.epsilon, t.delta, rng, t.config,
                                 t.shared("rows", lambda: sgd_rows(t.problem))))

    return draw
