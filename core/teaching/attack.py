"""The attacker's view: two data sets one person apart, what each stage releases on each, the privacy loss between
them, and the membership game. Teaching only: everything here reads both data sets, so nothing is private.

- neighbours: P (the data) and P' (row i replaced by the row that pulls u^T theta the other way most): data sets
  of the same n that differ in one row, the unit of the guarantee (docs/method.md §1).
- laws: stage by stage, exactly, on the branch most likely on P: the noisy counts of Algorithms 2 and 4 (Laplace,
  and the law of m = max(0, floor(N_hat - k)) they release), then T of Algorithm 5 (Gaussian at the branch's
  certificates, with each data set's own modulus omega of (11)).
- privacy_loss: the pair's delta(eps), from dp_accounting's privacy-loss distributions of the released m's and of T
  (binned), composed on that branch.
- the game: rounds drawn by the real pipeline (core.mechanisms.pipeline.run_private) on P or P', scored against
  TPR <= e^eps FPR + delta with the audit's one-sided Clopper-Pearson bound (`epsilon_bound`).
Plain Algorithm 5 throughout: the fallback's objective perturbation has no closed-form law (it is among the
baselines, drawn by core.methods.compare).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld
from numpy.typing import NDArray
from scipy import stats
from scipy.linalg import cho_factor, cho_solve

from core.estimator.losses import get_loss
from core.estimator.problem import Problem
from core.mechanisms.certificates import lambda_max_statistic, lambda_min_statistic, steps_to_invert
from core.mechanisms.pipeline import prepare_model, run_private
from core.mechanisms.recursion import down_recursion, up_recursion
from core.mechanisms.release import noise_multiplier, omega, unit_direction
from core.mechanisms.stability import StabilityTest, stability_test
from core.methods.compare import compare
from core.privacy.accounting import Budget
from core.privacy.gaussian import sigma

TAIL = 40.0  # a Laplace law is kept to +- TAIL scales: the rest has mass e^-40, about 4e-18
RELEASE_BINS = 4000  # T's law is binned for the loss: binning is post-processing, so it can only hide loss
RELEASE_SPAN = 12.0  # ... over +- 12 standard deviations (the rest is two tail bins)
LOSS_STEP = 1e-3  # dp_accounting's discretisation of the loss (pessimistic: delta is rounded up)
ALPHA = 1e-3  # the game's and the audit's error rate: P(eps_lb > the true eps) <= ALPHA


# ---------------------------------------------------------------- Clopper-Pearson (shared with the privacy audit)


def cp_lower(k: int, n: int, a: float) -> float:
    """One-sided Clopper-Pearson lower bound: P(p < cp_lower) <= a for k ~ Bin(n, p)."""
    return 0.0 if k <= 0 else float(stats.beta.ppf(a, k, n - k + 1))


def cp_upper(k: int, n: int, a: float) -> float:
    """One-sided Clopper-Pearson upper bound: P(p > cp_upper) <= a for k ~ Bin(n, p)."""
    return 1.0 if k >= n else float(stats.beta.ppf(1.0 - a, k + 1, n - k))


def epsilon_bound(k_num: int, n_num: int, k_den: int, n_den: int, delta: float, alpha: float) -> float:
    """ln((p_lo - delta) / q_hi) for one event in one order, at level alpha; -inf if p_lo <= delta.

    (eps, delta)-DP means p <= e^eps q + delta for every event; p_lo bounds the event's probability on the numerator
    data set from below, q_hi on the other from above, each at alpha/2, so the result exceeds the true epsilon with
    probability <= alpha.
    """
    p_lo = cp_lower(k_num, n_num, alpha / 2.0)
    q_hi = cp_upper(k_den, n_den, alpha / 2.0)
    return math.log((p_lo - delta) / q_hi) if p_lo > delta else -math.inf


# ---------------------------------------------------------------- the pair


@dataclass(frozen=True)
class Neighbours:
    """P and P': the same rows but `row`, which P' replaces by a copy of row `partner`. NOT private.

    influence : the first-order move of u^T theta the swap makes, (s_row - s_partner)/n (`influences`).
    shift : the exact u^T theta(P') - u^T theta(P), from the two fits.
    """

    P: Problem
    P_prime: Problem
    u: NDArray[np.float64]
    row: int
    partner: int
    influence: float
    shift: float


def influences(problem: Problem, u: NDArray) -> NDArray[np.float64]:
    """s_i = h'(x_i^T theta, y_i) x_i^T (H + lam_reg I)^{-1} u: removing row i moves u^T theta by about s_i/n (one
    Newton step of (1) from theta(P_n)), so swapping row i for row j moves it by about (s_i - s_j)/n."""
    f = problem.fit.require_minimiser()
    w = cho_solve(cho_factor(f.hessian + f.lam_reg * np.eye(f.d)), u)
    h = get_loss(problem.geometry.loss.name)
    return h.d1(problem.X @ f.theta, problem.y) * (problem.X @ w)


def neighbours(problem: Problem, u: NDArray | int, row: int | None = None) -> Neighbours:
    """The pair for `row` (None: the row whose swap moves u^T theta most), its partner pulling the other way most."""
    uv = unit_direction(u, problem.d)
    s = influences(problem, uv)
    if row is None:  # the largest swap, s.max() - s.min(), pairs the two extremes
        row = int(np.argmax(np.abs(s)))
    partner = int(np.argmin(s)) if s[row] >= 0 else int(np.argmax(s))
    X, y = problem.X.copy(), problem.y.copy()
    X[row], y[row] = problem.X[partner], problem.y[partner]
    other = prepare_model(X, y, problem.model, problem.feature_names)
    other.fit.require_minimiser()
    moved = sum(other.fit.along(uv)) - sum(problem.fit.along(uv))
    return Neighbours(problem, other, uv, row, partner, float(s[row] - s[partner]) / problem.n, moved)


# ---------------------------------------------------------------- the laws, stage by stage


def _log_mass(logcdf: Callable, logsf: Callable, a: NDArray, b: NDArray) -> NDArray[np.float64]:
    """ln P(a <= X < b), accurate in both tails: from the lower tail's cdf left of 0, the upper tail's sf right of 0."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    lower = b <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = logcdf(b) + np.log1p(-np.exp(logcdf(a) - logcdf(b)))
        hi = logsf(a) + np.log1p(-np.exp(logsf(b) - logsf(a)))
        mid = np.log1p(-np.exp(logcdf(a)) - np.exp(logsf(b)))
    out = np.where(lower, lo, np.where(a >= 0, hi, mid))
    return np.where(np.isnan(out), -np.inf, out)  # both ends past the floats' range: no mass a float can hold


def _laplace_log_tail(b: float, side: float, x: NDArray) -> NDArray[np.float64]:
    """ln P(L < x) (side 1) or ln P(L > x) (side -1) for L ~ Lap(b), in closed form: scipy's underflows to -inf
    past about 745 scales, where a count far from N - k lies."""
    t = side * np.asarray(x, dtype=np.float64) / b
    with np.errstate(over="ignore"):
        return np.where(t < 0, math.log(0.5) + t, np.log1p(-0.5 * np.exp(-t)))


@dataclass(frozen=True)
class CountLaw:
    """One Laplace-count stage (Algorithm 6) on P and P': N_hat = N + Lap(1/eps), m = max(0, floor(N_hat - k)), the
    law of m on each (log_p, log_q over the support m) and lambda_hat = the recursion's inverse of the likeliest m.
    NOT private."""

    N: int
    N_prime: int
    epsilon: float
    delta: float
    k: float
    m: NDArray[np.int64]
    log_p: NDArray[np.float64]
    log_q: NDArray[np.float64]
    mode: int
    lambda_hat: float

    @property
    def scale(self) -> float:
        return 1.0 / self.epsilon

    @property
    def ratio(self) -> float:
        """The largest |ln P(m)/P'(m)| over every m: at most eps |N - N'| <= eps (Proposition 6.1)."""
        return float(np.max(np.abs(self.log_p - self.log_q)))


def count_law(N: int, N_prime: int, epsilon: float, delta: float, inverse: Callable[[int], float]) -> CountLaw:
    """The exact law of m on both data sets, over 0 and every m within TAIL scales of N - k or N' - k."""
    b = 1.0 / epsilon
    k, _ = steps_to_invert(0.0, epsilon, delta)
    lo = max(1, math.floor(min(N, N_prime) - k - TAIL * b))
    m = np.concatenate(([0], np.arange(lo, max(lo, math.ceil(max(N, N_prime) - k + TAIL * b)) + 1)))

    def log_pmf(count: int) -> NDArray[np.float64]:
        upper = (m + 1 + k - count).astype(np.float64)
        lower = np.where(m == 0, -np.inf, m + k - count)  # m = 0 takes every N_hat - k below 1
        return _log_mass(partial(_laplace_log_tail, b, 1.0), partial(_laplace_log_tail, b, -1.0), lower, upper)

    log_p = log_pmf(N)
    mode = int(m[np.argmax(log_p)])
    return CountLaw(N, N_prime, float(epsilon), float(delta), k, m, log_p, log_pmf(N_prime), mode, inverse(mode))


@dataclass(frozen=True)
class GaussianLaw:
    """T of Algorithm 5 on the branch's certificates: N(mean, sd^2) on P, N(mean', sd'^2) on P' (each data set's own
    omega of (11) sets its noise). NOT private."""

    mean: float
    mean_prime: float
    sd: float
    sd_prime: float

    def log_bins(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(ln P(bin), ln P'(bin)): RELEASE_BINS bins over +- RELEASE_SPAN sd, and the two tails."""
        wide = max(self.sd, self.sd_prime)
        inner = np.linspace(min(self.mean, self.mean_prime) - RELEASE_SPAN * wide,
                            max(self.mean, self.mean_prime) + RELEASE_SPAN * wide, RELEASE_BINS + 1)
        edges = np.concatenate(([-np.inf], inner, [np.inf]))
        std = stats.norm()
        # In standard units, where _log_mass splits the tails at each law's centre.
        return tuple(_log_mass(std.logcdf, std.logsf, z[:-1], z[1:])
                     for z in ((edges - self.mean) / self.sd, (edges - self.mean_prime) / self.sd_prime))


def gaussian_law(pair: Neighbours, test: StabilityTest, epsilon: float, delta: float, calibration: str) -> GaussianLaw:
    """The release's law on both data sets, given certificates that passed the test (14)."""
    s = sigma(epsilon, delta, calibration)
    g = pair.P.geometry

    def one(p: Problem) -> tuple[float, float]:
        return sum(p.fit.along(pair.u)), s * noise_multiplier(omega(p.fit, g, pair.u), test)

    (mean, sd), (mean_prime, sd_prime) = one(pair.P), one(pair.P_prime)
    return GaussianLaw(mean, mean_prime, sd, sd_prime)


@dataclass(frozen=True)
class PrivacyLoss:
    """The pair's privacy profile on the branch, from dp_accounting: delta(eps) on `epsilons` (the larger of the two
    orders), the pair's epsilon at the claimed delta, its delta at the claimed epsilon, and the total variation
    (delta at eps = 0), which caps any membership guess at (1 + tv)/2 on this branch. NOT private."""

    epsilons: NDArray[np.float64]
    deltas: NDArray[np.float64]
    epsilon_at_delta: float
    delta_at_epsilon: float
    tv: float


def _pld(log_p: NDArray, log_q: NDArray) -> pld.PrivacyLossDistribution:
    keep = np.isfinite(log_p) | np.isfinite(log_q)
    return pld.from_two_probability_mass_functions(
        dict(enumerate(log_p[keep].tolist())), dict(enumerate(log_q[keep].tolist())),
        value_discretization_interval=LOSS_STEP, symmetric=False)


def privacy_loss(parts: Sequence[tuple[NDArray, NDArray]], epsilon: float, delta: float) -> PrivacyLoss:
    """Compose the stages' PLDs (each given as ln-pmfs on P and P' over one support) and read the profile."""
    composed = _pld(*parts[0])
    for p, q in parts[1:]:
        composed = composed.compose(_pld(p, q))
    grid = np.linspace(0.0, 1.5 * epsilon, 61)
    deltas = np.asarray(composed.get_delta_for_epsilon(grid), dtype=np.float64)
    return PrivacyLoss(grid, deltas, float(composed.get_epsilon_for_delta(delta)),
                       float(composed.get_delta_for_epsilon(epsilon)), float(deltas[0]))


@dataclass(frozen=True)
class Laws:
    """What every stage releases on P and on P', exactly, on the branch most likely on P (its certificates are the
    likeliest m's), and the pair's privacy loss there. release is None when that branch releases nothing (bottom);
    stage2 is None when it stops at lambda_hat_min = 0. NOT private."""

    pair: Neighbours
    budget: Budget
    stage1: CountLaw
    stage2: CountLaw | None
    test: StabilityTest
    release: GaussianLaw | None
    loss: PrivacyLoss


def laws(pair: Neighbours, budget: Budget, calibration: str = "paper") -> Laws:
    """Stages 1-4 on P and P', stage by stage: each count's law, then the next stage at the likeliest certificate."""
    P, Q = pair.P, pair.P_prime
    g, n, lam_reg = P.geometry, P.n, P.fit.lam_reg
    a, b, r = budget.lambda_min, budget.lambda_max, budget.release
    down = down_recursion(g, n, lam_reg)
    stage1 = count_law(down.count(lambda_min_statistic(P.fit, g)), down.count(lambda_min_statistic(Q.fit, g)),
                       a.epsilon, a.delta, down.inverse)
    parts = [(stage1.log_p, stage1.log_q)]
    stage2 = None
    if stage1.lambda_hat > 0:
        up = up_recursion(stage1.lambda_hat, g, n, lam_reg)
        stage2 = count_law(up.count(lambda_max_statistic(P.fit, g)), up.count(lambda_max_statistic(Q.fit, g)),
                           b.epsilon, b.delta, up.inverse)
        parts.append((stage2.log_p, stage2.log_q))
    test = stability_test(stage1.lambda_hat, None if stage2 is None else stage2.lambda_hat, g, n, lam_reg,
                          r.epsilon, r.delta)
    release = gaussian_law(pair, test, r.epsilon, r.delta, calibration) if test.passed else None
    if release is not None:
        parts.append(release.log_bins())
    loss = privacy_loss(parts, budget.epsilon_total, budget.delta_total)
    return Laws(pair, budget, stage1, stage2, test, release, loss)


# ---------------------------------------------------------------- the membership game


def max_tpr(fpr: NDArray | float, epsilon: float, delta: float) -> NDArray | float:
    """The best true-positive rate any test of 'the row is in' can have at a false-positive rate, under (eps, delta)
    -DP: TPR <= e^eps FPR + delta and 1 - FPR <= e^eps (1 - TPR) + delta (Kairouz, Oh & Viswanath 2015)."""
    fpr = np.asarray(fpr, dtype=np.float64)
    return np.clip(np.minimum(math.exp(epsilon) * fpr + delta, 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr)),
                   0.0, 1.0)


def best_accuracy(epsilon: float, delta: float) -> float:
    """(e^eps + delta)/(1 + e^eps): the best chance any guesser has of telling P from P' when each is drawn half the
    time (the two inequalities of max_tpr, added)."""
    return min(1.0, (math.exp(min(epsilon, 700.0)) + delta) / (1.0 + math.exp(min(epsilon, 700.0))))


@dataclass(frozen=True)
class Round:
    """One round: the secret (was the row in?), what the pipeline released (None: bottom), and the guess."""

    with_row: bool
    value: float | None
    guess: bool | None = None


def draw_round(pair: Neighbours, budget: Budget, rng: np.random.Generator, calibration: str = "paper") -> Round:
    """A fair coin picks P or P'; the real pipeline releases on it with fresh noise."""
    with_row = bool(rng.integers(2))
    run = run_private(pair.P if with_row else pair.P_prime, pair.u, budget, rng, calibration)
    return Round(with_row, run.release.value)


@dataclass(frozen=True)
class GameScore:
    """The guesses against the truth, and what (eps, delta) allows. epsilon_lb is the audit's bound: the larger of
    the two orders (guessing 'in', guessing 'out'), each at alpha/2, so P(epsilon_lb > eps) <= alpha when the
    mechanism is (eps, delta)-DP and the guesses follow one rule throughout."""

    tp: int
    fn: int
    fp: int
    tn: int
    epsilon: float
    delta: float
    epsilon_lb: float

    @property
    def rounds(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    @property
    def tpr(self) -> float:
        return self.tp / max(1, self.tp + self.fn)

    @property
    def fpr(self) -> float:
        return self.fp / max(1, self.fp + self.tn)

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / max(1, self.rounds)

    @property
    def best(self) -> float:
        return best_accuracy(self.epsilon, self.delta)


def score(rounds: Sequence[Round], epsilon: float, delta: float, alpha: float = ALPHA) -> GameScore:
    """Count the guessed rounds and bound the epsilon they show (`epsilon_bound`, both orders at alpha/2)."""
    done = [r for r in rounds if r.guess is not None]
    tp = sum(r.with_row and r.guess for r in done)
    fn = sum(r.with_row and not r.guess for r in done)
    fp = sum(not r.with_row and r.guess for r in done)
    tn = sum(not r.with_row and not r.guess for r in done)
    lb = max(epsilon_bound(tp, tp + fn, fp, fp + tn, delta, alpha / 2.0),
             epsilon_bound(tn, fp + tn, fn, tp + fn, delta, alpha / 2.0)) if tp + fn and fp + tn else -math.inf
    return GameScore(tp, fn, fp, tn, float(epsilon), float(delta), lb)


def likelihood_guess(law: GaussianLaw | None, value: float | None) -> bool:
    """The likelihood-ratio guess on the branch's law: 'in' when T is likelier on P than on P' (bottom: 'out')."""
    if law is None or value is None:
        return False
    return bool(stats.norm.logpdf(value, law.mean, law.sd) > stats.norm.logpdf(value, law.mean_prime, law.sd_prime))


# ---------------------------------------------------------------- the baselines on the same pair


def baseline_pairs(pair: Neighbours, budget: Budget, methods: Sequence[str], draws: int, seed: int | None,
                   calibration: str = "paper") -> dict[str, tuple[NDArray, NDArray]]:
    """Each method's released u^T theta, `draws` times on P and on P' from the same generator state (paired draws, so
    a method's differences show the shift through its noise): core.methods.compare's runners, nothing re-implemented."""
    out = {}
    for i, name in enumerate(methods):
        entropy = np.random.SeedSequence(None if seed is None else seed + i).entropy  # OS entropy when unseeded
        both = [compare(p, pair.u, budget, draws, np.random.default_rng(entropy), (name,), calibration=calibration)
                for p in (pair.P, pair.P_prime)]
        out[name] = tuple(np.array([np.nan if v is None else v for v in c.methods[name].values], dtype=np.float64)
                          for c in both)
    return out
