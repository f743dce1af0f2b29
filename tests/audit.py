"""An empirical privacy audit of the private release, run as an attacker would run it.

For two neighbouring data sets P and P' (same n, one row replaced) the mechanism is run many times
on each; for an event S of its output, p = P(M(P) in S) and q = P(M(P') in S) are estimated, and

    eps_lb = ln((p_lo - delta) / q_hi)

is a lower bound on the epsilon of any (epsilon, delta) guarantee the mechanism could have for this
pair, because (epsilon, delta)-DP means p <= e^epsilon q + delta for every S, in both orders.
p_lo and q_hi are one-sided Clopper-Pearson bounds (exact binomial, core.teaching.attack.epsilon_bound, which the
attacker's view's membership game scores with too).

**The statistical guarantee.** `audit` splits each sample in two halves, a selection half and a
test half (draws are i.i.d., so the halves are independent). Thresholds come from quantiles of the
pooled selection halves; every candidate event (a threshold event, its complement, presence or
absence of a value) is scored in both orders on the selection half, and the `keep` best are tested
on the test half, each at level alpha/keep (alpha/(2 keep) for each of its two Clopper-Pearson
bounds). If the mechanism is (epsilon, delta)-DP on the pair, then

    P(eps_lb > epsilon) <= alpha            (default alpha = 1e-3),

whatever the selection did: the selected events are fixed given the selection half, and the
union bound over the `keep` tested events costs a factor keep, which the per-event level pays.
So an audit test that asserts eps_lb <= epsilon fails with probability at most alpha on a correct
mechanism, and a failure is evidence of a violation at that confidence.

**Sampling the real mechanism.** `run_draws` calls `core.mechanisms.pipeline.run_private` once per draw, so
every stage, branch and noise draw is the production code. Only the exact count of stage 1,
`DecreasingRecursion.count`, is memoised while it runs: a deterministic function of public
constants and the fit (it is what makes a call slow at large n); the first draws are also run
without the memo from the same generator state and must agree exactly. `stage1_draws` vectorises
stage 1 alone (Laplace noises in bulk, mapped through `core.mechanisms.certificates.steps_to_invert` and the
recursion's `inverse`) and checks on a subsample that it equals `run_private` and
`lambda_min_certificate` exactly with the same generator stream.

**Pairs.** The builders return (P, P') as `Sample`s (X, y, loss); `prepare_sample` fits one.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from core.estimator.losses import get_loss
from core.mechanisms.certificates import lambda_min_certificate, steps_to_invert
from core.mechanisms.pipeline import PrivateRun, Problem, prepare, run_private
from core.mechanisms.recursion import DecreasingRecursion, down_recursion
from core.privacy.accounting import Budget, split_budget
from core.teaching.attack import epsilon_bound

ALPHA = 1e-3  # family-wise error of one audit: P(eps_lb > epsilon) <= ALPHA on a correct mechanism
KEEP = 4  # events carried from the selection half to the test half (Bonferroni factor)
QUANTILES = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999)
CHECK_DRAWS = 20  # draws of run_draws also run without the memoised count, compared exactly
REPLAY_CHECK = 100  # subsample on which stage1_draws is compared with run_private

# What each run of the mechanism releases, as floats (NaN: not released on this draw).
FEATURES = ("N_hat_a", "m_a", "lambda_hat_min", "N_hat_b", "m_b", "lambda_hat_max", "passed", "released", "value")
STAGES: dict[str, tuple[str, ...]] = {
    "stage 1 (lambda_hat_min)": ("N_hat_a", "m_a", "lambda_hat_min"),
    "stages 1-2 (certificates)": ("N_hat_a", "m_a", "lambda_hat_min", "N_hat_b", "m_b", "lambda_hat_max"),
    "stage 3 (test)": ("passed",),
    "stage 4 (release)": ("released", "value"),
    "joint": FEATURES,
}


def stage_claim(stage: str, budget: Budget) -> tuple[float, float]:
    """The (epsilon, delta) the documentation claims for a stage's output (docs/privacy.md).

    Stage 1 is a Laplace count, pure eps_a-DP. The certificates together, and the test that
    post-processes them, are (eps_a + eps_b, delta_a + delta_b)-DP: off stage 1's failure event
    stage 2's count has sensitivity 1. The release and the joint output carry the total budget.
    """
    a, b = budget.lambda_min, budget.lambda_max
    if stage.startswith("stage 1 "):
        return a.epsilon, 0.0
    if stage.startswith(("stages 1-2", "stage 3")):
        return a.epsilon + b.epsilon, a.delta + b.delta
    return budget.epsilon_total, budget.delta_total


# --------------------------------------------------------------------------- events

_KINDS = (">", "<=", "not >", "not <=")


@dataclass(frozen=True)
class Event:
    """A set of outputs: a threshold on one feature, its complement, or a value's presence.

    kind is ">" or "<=" (a missing value is in neither), "not >" or "not <=" (the complements,
    which contain the missing values), "present" or "absent".
    """

    feature: str
    kind: str
    threshold: float = math.nan

    def indicator(self, x: NDArray[np.float64]) -> NDArray[np.bool_]:
        if self.kind == "present":
            return ~np.isnan(x)
        if self.kind == "absent":
            return np.isnan(x)
        base = x > self.threshold if self.kind.endswith(">") else x <= self.threshold
        return ~base if self.kind.startswith("not") else base

    def __str__(self) -> str:
        if self.kind in ("present", "absent"):
            return f"{self.feature} {self.kind}"
        return f"{self.feature} {self.kind} {self.threshold:.6g}"


@dataclass(frozen=True)
class Finding:
    """One event tested in one order: eps_lb = ln((p_lo - delta)/q_hi), counts k out of n.

    order "P/P'" means the event's frequency on P over that on P'; "P'/P" the reverse.
    """

    event: Event
    order: str
    k_num: int
    n_num: int
    k_den: int
    n_den: int
    eps_lb: float

    def __str__(self) -> str:
        return f"[{self.event}] {self.order}: {self.k_num}/{self.n_num} vs {self.k_den}/{self.n_den}"


@dataclass(frozen=True)
class AuditResult:
    """The audit of one output (a set of features) of one pair against a claimed (epsilon, delta).

    eps_lb is the largest bound over the tested events (0 when none is informative); findings are
    the tested events, best first. P(eps_lb > epsilon) <= alpha when the claim holds.
    """

    eps_lb: float
    epsilon: float
    delta: float
    alpha: float
    draws: tuple[int, int]
    findings: tuple[Finding, ...]

    @property
    def passed(self) -> bool:
        return self.eps_lb <= self.epsilon

    def __str__(self) -> str:
        best = str(self.findings[0]) if self.findings else "no event"
        return (
            f"eps_lb = {self.eps_lb:.3f} against the claim ({self.epsilon:.4g}, {self.delta:.3g}) from "
            f"{self.draws[0]} + {self.draws[1]} draws (alpha = {self.alpha:g}); best event {best}"
        )


def _thresholds(x: NDArray[np.float64], quantiles: Sequence[float]) -> NDArray[np.float64]:
    """Distinct sample quantiles of the non-missing values (actual sample points)."""
    v = x[~np.isnan(x)]
    if v.size == 0:
        return np.empty(0)
    return np.unique(np.quantile(v, quantiles, method="inverted_cdf"))


def _candidates(pooled: Mapping[str, NDArray[np.float64]], quantiles: Sequence[float]) -> list[Event]:
    events: list[Event] = []
    for name, x in pooled.items():
        missing = bool(np.isnan(x).any())
        if missing:
            events += [Event(name, "present"), Event(name, "absent")]
        for t in _thresholds(x, quantiles):
            # Without missing values "not >" is "<=" and "not <=" is ">".
            kinds = _KINDS if missing else _KINDS[:2]
            events += [Event(name, k, float(t)) for k in kinds]
    return events


def _score(events: list[Event], num: Mapping, den: Mapping, order: str, delta: float, alpha: float) -> list[Finding]:
    n_num, n_den = len(next(iter(num.values()))), len(next(iter(den.values())))
    out = []
    for e in events:
        k_num = int(e.indicator(num[e.feature]).sum())
        k_den = int(e.indicator(den[e.feature]).sum())
        eps = epsilon_bound(k_num, n_num, k_den, n_den, delta, alpha)
        out.append(Finding(e, order, k_num, n_num, k_den, n_den, eps))
    return out


def _split(sample: Mapping[str, NDArray], features: Sequence[str]) -> tuple[dict, dict]:
    n = len(sample[features[0]])
    half = n // 2
    sel = {f: np.asarray(sample[f], dtype=np.float64)[:half] for f in features}
    test = {f: np.asarray(sample[f], dtype=np.float64)[half:] for f in features}
    return sel, test


def audit(
    sample_p: Mapping[str, NDArray],
    sample_q: Mapping[str, NDArray],
    features: Sequence[str],
    epsilon: float,
    delta: float,
    alpha: float = ALPHA,
    keep: int = KEEP,
    quantiles: Sequence[float] = QUANTILES,
) -> AuditResult:
    """A lower bound on epsilon for the output `features`, valid at family-wise level alpha.

    sample_p, sample_q map feature names to one value per draw (NaN when not released), i.i.d.
    draws of the mechanism on P and on P'. Events are chosen on the first half of each sample and
    tested on the second (see the module docstring): P(eps_lb > epsilon) <= alpha whenever the
    mechanism is (epsilon, delta)-DP on this pair.
    """
    sel_p, test_p = _split(sample_p, features)
    sel_q, test_q = _split(sample_q, features)
    pooled = {f: np.concatenate([sel_p[f], sel_q[f]]) for f in features}
    events = _candidates(pooled, quantiles)
    level = alpha / keep
    scored = _score(events, sel_p, sel_q, "P/P'", delta, level) + _score(events, sel_q, sel_p, "P'/P", delta, level)
    # Best bound first; ties (e.g. all -inf) by the plug-in log ratio, so selection still has a direction.
    def plug_in(f: Finding) -> float:
        return math.log((f.k_num + 0.5) / f.n_num) - math.log((f.k_den + 0.5) / f.n_den)

    scored.sort(key=lambda f: (f.eps_lb, plug_in(f)), reverse=True)
    chosen = scored[:keep]
    tested = []
    for f in chosen:
        num, den = (test_p, test_q) if f.order == "P/P'" else (test_q, test_p)
        tested += _score([f.event], num, den, f.order, delta, level)
    tested.sort(key=lambda f: f.eps_lb, reverse=True)
    eps_lb = max([0.0] + [f.eps_lb for f in tested])
    n_p, n_q = len(sample_p[features[0]]), len(sample_q[features[0]])
    return AuditResult(eps_lb, float(epsilon), float(delta), alpha, (n_p, n_q), tuple(tested))


# --------------------------------------------------------------------------- sampling the mechanism


@contextmanager
def memoised_counts() -> Iterator[None]:
    """While active, DecreasingRecursion.count is memoised per (recursion, statistic).

    The count is a deterministic function of public constants and of the fit's lambda_min, so the
    memo returns exactly what the computation would; it only saves re-running the recursion
    (thousands of steps at large n) on every draw. The original method is restored on exit.
    """
    original = DecreasingRecursion.count
    cache: dict[tuple[int, float], tuple[DecreasingRecursion, int]] = {}

    def count(self: DecreasingRecursion, lam: float) -> int:
        hit = cache.get((id(self), lam))
        if hit is None or hit[0] is not self:  # the stored instance guards against a reused id
            hit = cache[(id(self), lam)] = (self, original(self, lam))
        return hit[1]

    DecreasingRecursion.count = count  # type: ignore[method-assign]
    try:
        yield
    finally:
        DecreasingRecursion.count = original  # type: ignore[method-assign]


def features_of(run: PrivateRun) -> tuple[float, ...]:
    """The released quantities of one run, in the order of FEATURES (NaN where not released)."""
    a, b, rel = run.lambda_min, run.lambda_max, run.release
    nan = math.nan
    return (
        a.N_hat,
        float(a.m),
        a.lambda_hat,
        nan if b is None else b.N_hat,
        nan if b is None else float(b.m),
        nan if b is None else b.lambda_hat,
        float(run.test.passed),
        float(rel.status == "released"),
        nan if rel.value is None else rel.value,
    )


def _same(a: NDArray, b: NDArray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=True))


def run_draws(
    problem: Problem, u: int | NDArray, budget: Budget, draws: int, seed: int | Sequence[int],
    calibration: str = "paper",
) -> dict[str, NDArray[np.float64]]:
    """`draws` independent runs of run_private on one prepared problem: FEATURES -> values.

    The first CHECK_DRAWS runs are made twice from the same generator state, with and without the
    memoised count, and must agree exactly (AssertionError otherwise).
    """
    rng = np.random.default_rng(seed)
    start = rng.bit_generator.state
    plain = np.array([features_of(run_private(problem, u, budget, rng, calibration)) for _ in range(CHECK_DRAWS)])
    rng.bit_generator.state = start
    out = np.empty((draws, len(FEATURES)))
    with memoised_counts():
        for i in range(draws):
            out[i] = features_of(run_private(problem, u, budget, rng, calibration))
    k = min(CHECK_DRAWS, draws)
    if not _same(plain[:k], out[:k]):
        raise AssertionError("run_private with the memoised count differs from run_private without it")
    return {f: out[:, j] for j, f in enumerate(FEATURES)}


def _stage1_map(problem: Problem, epsilon: float, delta: float, noise: NDArray[np.float64]) -> dict[str, NDArray]:
    """Stage 1's outputs for given Laplace(1/epsilon) draws: N_hat = N + noise, then m and lambda_hat."""
    f = problem.fit
    rec = down_recursion(problem.geometry, f.n, f.lam_reg)
    N = rec.count(f.lambda_min)
    N_hat = N + noise
    m = np.fromiter((steps_to_invert(float(x), epsilon, delta)[1] for x in N_hat), dtype=np.int64, count=N_hat.size)
    levels = np.unique(m)
    lam = np.array([rec.inverse(int(j)) for j in levels])
    return {"N_hat_a": N_hat, "m_a": m.astype(np.float64), "lambda_hat_min": lam[np.searchsorted(levels, m)]}


def check_stage1_replay(
    problem: Problem, u: int | NDArray, budget: Budget, seed: int, draws: int = REPLAY_CHECK
) -> None:
    """The vectorised stage 1 equals the real code exactly with the same generator stream.

    Per draw: run_private from a fresh generator against the map of that generator's first
    Laplace draw. In bulk: `draws` successive lambda_min_certificate calls on one generator
    against `draws` Laplace noises drawn at once from a copy. AssertionError on any difference.
    """
    a = budget.lambda_min
    runs = [run_private(problem, u, budget, np.random.default_rng([seed, 1, i])) for i in range(draws)]
    noise = np.array([np.random.default_rng([seed, 1, i]).laplace(0.0, 1.0 / a.epsilon) for i in range(draws)])
    mapped = _stage1_map(problem, a.epsilon, a.delta, noise)
    real = np.array([features_of(r)[:3] for r in runs])
    if not _same(real, np.column_stack([mapped[k] for k in STAGES["stage 1 (lambda_hat_min)"]])):
        raise AssertionError("vectorised stage 1 differs from run_private")
    rng = np.random.default_rng([seed, 2])
    certs = [lambda_min_certificate(problem.fit, problem.geometry, a.epsilon, a.delta, rng) for _ in range(draws)]
    noise = np.random.default_rng([seed, 2]).laplace(0.0, 1.0 / a.epsilon, draws)
    bulk = _stage1_map(problem, a.epsilon, a.delta, noise)
    real = np.array([(c.N_hat, c.m, c.lambda_hat) for c in certs], dtype=np.float64)
    if not _same(real, np.column_stack([bulk["N_hat_a"], bulk["m_a"], bulk["lambda_hat_min"]])):
        raise AssertionError("vectorised stage 1 differs from lambda_min_certificate on one generator stream")


def stage1_draws(
    problem: Problem, u: int | NDArray, budget: Budget, draws: int, seed: int
) -> dict[str, NDArray[np.float64]]:
    """`draws` independent outputs of stage 1 (N_hat_a, m_a, lambda_hat_min) at budget.lambda_min.

    Checked first against the real code on a subsample (check_stage1_replay).
    """
    check_stage1_replay(problem, u, budget, seed)
    a = budget.lambda_min
    noise = np.random.default_rng([seed, 0]).laplace(0.0, 1.0 / a.epsilon, draws)
    return _stage1_map(problem, a.epsilon, a.delta, noise)


# --------------------------------------------------------------------------- pairs of neighbours


class Sample(NamedTuple):
    """A data set for `prepare`: covariates, responses or labels, and the loss."""

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    loss: str


def prepare_sample(s: Sample) -> Problem:
    """Stage 0 on the cube domain, lam_reg = 0 (the non-private fit, done once per data set)."""
    return prepare(s.X, s.y, s.loss, "cube")


def replace_row(s: Sample, i: int, x: NDArray | None = None, y: float | None = None) -> Sample:
    """The neighbour with row i replaced (covariates x and/or response y)."""
    X, yy = s.X.copy(), s.y.copy()
    if x is not None:
        X[i] = x
    if y is not None:
        yy[i] = y
    return Sample(X, yy, s.loss)


def robust_sample(n: int, d: int, seed: int, theta: Sequence[float] | None = None) -> Sample:
    """x ~ Uni[-1, 1]^d, y = <x, theta*> + Laplace(1); theta* defaults to linspace(0.5, -0.5, d)."""
    rng = np.random.default_rng(seed)
    th = np.linspace(0.5, -0.5, d) if theta is None else np.asarray(theta, dtype=np.float64)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    return Sample(X, X @ th + rng.laplace(size=n), "robust")


def outlier_pair(n: int = 50_000, response: float = 1e16, seed: int = 20250301) -> tuple[Sample, Sample]:
    """Robust regression, d = 2, theta* = (0.5, -0.5); P' sets row 0's response to `response`.

    One huge residual changes the objective's scale but, for a correct fit, moves theta by at
    most the local sensitivity: the release must stay as private on this pair as on any other.
    """
    p = robust_sample(n, 2, seed, (0.5, -0.5))
    return p, replace_row(p, 0, y=response)


def separable_pair(n: int = 5_000, seed: int = 20250302) -> tuple[Sample, Sample]:
    """Logistic, x ~ Uni[-1, 1]^2, y = sign(x0) (separable by the line x0 = 0); P' flips row 0's label.

    No minimiser exists on P; on P' one exists. Both must end with the same kind of outcome.
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    X[:, 0] = np.where(np.abs(X[:, 0]) < 1e-3, 0.5, X[:, 0])  # no row on (or next to) the line
    p = Sample(X, np.sign(X[:, 0]), "logistic")
    return p, replace_row(p, 0, y=-p.y[0])


def large_coefficient_pair(n: int = 20_000, scale: float = 3.16e5, seed: int = 20250306) -> tuple[Sample, Sample]:
    """Robust, d = 3, theta* = scale (1, -0.5, 0.25), responses of about 3e5 (incomes in dollars on features scaled
    to [-1, 1]); P' replaces the last row by a fresh draw of the same model.

    Before the fit was exact at every scale, P was certified and P' was not: stage-1 counts 328 and 1, and P
    released in every run while P' never did (eps_lb 9.4 for a claim of 4).
    """
    rng = np.random.default_rng(seed)
    theta = scale * np.array([1.0, -0.5, 0.25])
    X = rng.uniform(-1.0, 1.0, size=(n + 1, 3))
    y = X @ theta + rng.laplace(size=n + 1)
    p = Sample(X[:n], y[:n], "robust")
    return p, replace_row(p, n - 1, x=X[n], y=float(y[n]))


def exact_count(problem: Problem) -> int:
    """N of stage 1, the exact (non-private) recursion count at the fit's lambda_min."""
    return lambda_min_certificate(problem.fit, problem.geometry, 1.0, 0.1, np.random.default_rng(0)).N


def flatten_curvature(p: Sample, problem: Problem, response: float = 50.0) -> Sample:
    """P' = P with the row that adds most curvature along H's lowest eigenvector replaced by the
    corner sign(v) of the cube with a residual of `response` (so h'' ~ e^-response: no curvature).
    """
    _, vecs = np.linalg.eigh(problem.fit.hessian)
    v = vecs[:, 0]
    t = p.X @ problem.fit.theta
    w = get_loss(p.loss).d2(t, p.y) * (p.X @ v) ** 2
    i = int(np.argmax(w))
    corner = np.where(v >= 0, 1.0, -1.0)
    return replace_row(p, i, x=corner, y=float(corner @ problem.fit.theta) + response)


def count_changing_pair(n: int, d: int, seed: int, tries: int = 200) -> tuple[Sample, Sample]:
    """The first robust pair, over seeds seed, seed + 1, ..., whose stage-1 counts differ by one.

    P is robust_sample(n, d, s); P' = flatten_curvature(P). Both counts are required to exceed 1,
    so neither sits at the recursion's floor. The search is deterministic.
    """
    for s in range(seed, seed + tries):
        p = robust_sample(n, d, s)
        prob_p = prepare_sample(p)
        q = flatten_curvature(p, prob_p)
        N, N2 = exact_count(prob_p), exact_count(prepare_sample(q))
        if abs(N - N2) == 1 and min(N, N2) > 1:
            return p, q
    raise RuntimeError(f"no pair with counts differing by one among {tries} seeds from {seed}")


def tightest_pair(n: int = 5_000, d: int = 2, seed: int = 20250303) -> tuple[Sample, Sample]:
    """Stage 1's tightest kind of pair: exact counts N and N' = N -+ 1, both > 1."""
    return count_changing_pair(n, d, seed)


def near_threshold_pair(n: int = 10_000, d: int = 2, seed: int = 20250304) -> tuple[Sample, Sample]:
    """A pair whose counts differ by one, sized so that the test (14) is borderline at NEAR_EPSILON."""
    return count_changing_pair(n, d, seed)


NEAR_EPSILON = 3.02  # total epsilon at which near_threshold_pair's P passes (14) with probability ~0.47 (P': ~0.2)


def fingerprint(s: Sample) -> int:
    """A 63-bit digest of a data set: the noise seed of its draws, so one data set always gets one stream."""
    h = hashlib.sha256(s.loss.encode())
    h.update(np.ascontiguousarray(s.X).tobytes())
    h.update(np.ascontiguousarray(s.y).tobytes())
    return int.from_bytes(h.digest()[:8], "little") >> 1


# --------------------------------------------------------------------------- the audited pairs


@dataclass(frozen=True)
class PairSpec:
    """A pair of neighbours with the total budget it is audited at, and the stages audited."""

    name: str
    build: Callable[[], tuple[Sample, Sample]]
    epsilon: float
    delta: float
    stages: tuple[str, ...] = tuple(STAGES)
    coordinate: int = 0

    @property
    def budget(self) -> Budget:
        return split_budget(self.epsilon, self.delta)


PAIRS: dict[str, PairSpec] = {
    p.name: p
    for p in (
        PairSpec("outlier 1e16", lambda: outlier_pair(50_000, 1e16), 2.0, 1e-6),
        PairSpec("outlier 1e13", lambda: outlier_pair(50_000, 1e13), 2.0, 1e-6),
        PairSpec("separable", separable_pair, 2.0, 1e-6),
        PairSpec("tightest", tightest_pair, 3.0, 1e-6),
        PairSpec("near threshold", near_threshold_pair, NEAR_EPSILON, 1e-6),
        PairSpec("large coefficient", large_coefficient_pair, 4.0, 1e-6),
    )
}


@dataclass(frozen=True)
class PairDraws:
    """Draws of one pair: stage 1 vectorised (stage1_p/q) and whole runs (runs_p/q).

    seconds_stage1 and seconds_runs are what producing each kind of draw cost, fits included in
    the first, summed over both data sets (also when a data set's draws came from the cache).
    """

    spec: PairSpec
    problems: tuple[Problem, Problem]
    stage1_p: dict[str, NDArray[np.float64]]
    stage1_q: dict[str, NDArray[np.float64]]
    runs_p: dict[str, NDArray[np.float64]] | None
    runs_q: dict[str, NDArray[np.float64]] | None
    seconds_stage1: float
    seconds_runs: float

    def sample(self, stage: str) -> tuple[dict[str, NDArray[np.float64]], dict[str, NDArray[np.float64]]]:
        """The draws a stage is audited on: the vectorised ones for stage 1, whole runs otherwise."""
        if stage == "stage 1 (lambda_hat_min)":
            return self.stage1_p, self.stage1_q
        if self.runs_p is None or self.runs_q is None:
            raise ValueError(f"no whole runs were drawn for the pair {self.spec.name!r}")
        return self.runs_p, self.runs_q

    def audit(self, stage: str, features: Sequence[str] | None = None, alpha: float = ALPHA) -> AuditResult:
        """The stage's audit against its claim (stage_claim) on the stage's sample."""
        eps, delta = stage_claim(stage, self.spec.budget)
        fs = STAGES[stage] if features is None else tuple(features)
        p, q = self.sample(stage)
        return audit(p, q, fs, eps, delta, alpha)


def draw_pair(spec: PairSpec, draws: int, stage1: int, cache: dict | None = None) -> PairDraws:
    """Fit both data sets, then `stage1` vectorised stage-1 draws and `draws` whole runs on each.

    Noise seeds come from the data sets' fingerprints. With `cache` (a dict kept by the caller),
    draws on a data set shared by several pairs (the outlier pairs' P) are made once.
    """
    cache = {} if cache is None else cache
    budget, u = spec.budget, spec.coordinate
    sides = []
    for s in spec.build():
        seed = fingerprint(s)
        key = (seed, budget, u, draws, stage1)
        if key not in cache:
            start = time.perf_counter()
            prob = prepare_sample(s)
            one = stage1_draws(prob, u, budget, stage1, seed)
            middle = time.perf_counter()
            runs = run_draws(prob, u, budget, draws, [seed, 3]) if draws else None
            cache[key] = (prob, one, runs, middle - start, time.perf_counter() - middle)
        sides.append(cache[key])
    (prob_p, s1p, rp, t1p, t2p), (prob_q, s1q, rq, t1q, t2q) = sides
    return PairDraws(spec, (prob_p, prob_q), s1p, s1q, rp, rq, t1p + t1q, t2p + t2q)
