"""Why the stability test (14) fails, or how close it came: every term of (14), with the one that binds.

(14) compares max(A, B)^2 - 1 with the threshold 2 eps / (1 + Phi^{-1}(1 - delta/2)^2). With
lam0 = lambda_hat_min + lam_reg, lam1 = lambda_hat_max + lam_reg, kappa = lam1/lam0 and the constants (13):

- cube (14b), d_p = d:
  A = (1 + sqrt(d_p) kappa gamma/(1-gamma)) / (1 - sqrt(d_p) kappa s1 - 4 d_p s2/lam0),
  B = 1 + sqrt(d_p) kappa s1 + 2 d_p s2/lam0 + sqrt(d_p) (lam1/Rl) gamma'/(1-gamma');
- ball (14a), with S = s1 + s2 max(r, r^2/lam0):
  A = (1 + kappa gamma/(1-gamma)) / (1 - kappa S),  B = 1 + kappa S + (lam1/Rl) gamma'/(1-gamma');

and both are stretched by (1 + eta)/(1 - eta), eta the fit's tolerance ratio (core.mechanisms.stability). Each term is
a small number that (14) needs to be much smaller than the threshold: max(A, B)^2 - 1 is about twice the
sum of the binding side's terms. The terms gamma, s1, s2 and gamma' shrink like 1/n, kappa does not, so a
large kappa_hat needs a proportionally larger n.

`diagnose` reads only the certified lambda_hat's, n and public constants (the StabilityTest's fields), so
the diagnosis is private (post-processing of stages 1 and 2). `from_fit` is for teaching: it uses the
noise-free certificates of core.teaching.whatif, computed from the fit's true eigenvalues, and is NOT private.

`projection` says what projecting the rows onto the declared domain did to the data (how many rows lay outside
it, whether that made the design rank-deficient) and `fit_diagnosis` puts it into the fit's own diagnosis: both
are counted on the raw rows, NOT private, for the data's owner only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from core.estimator.fit import RANK_DEFICIENT, weighted_gram
from core.estimator.geometry import Geometry
from core.estimator.problem import Problem
from core.mechanisms.stability import StabilityTest

SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


@dataclass(frozen=True)
class Term:
    """One term of (14): its name in plain symbols, where it sits, and its value.

    place: "A numerator", "A denominator" or "B". alone: max(A, B)^2 - 1 if this were the only term
    (no fit stretch): (1 + x)^2 - 1 on the numerator and on B, 1/(1 - x)^2 - 1 in the denominator (inf
    once x >= 1).
    """

    name: str
    place: str
    value: float

    @property
    def side(self) -> str:
        return self.place[0]

    @property
    def alone(self) -> float:
        if self.place == "A denominator":
            return math.inf if self.value >= 1 else 1.0 / (1.0 - self.value) ** 2 - 1.0
        return (1.0 + self.value) ** 2 - 1.0


@dataclass(frozen=True)
class Diagnosis:
    """Every term of (14) for one test, the side and term that bind, and a one-sentence summary.

    Attributes
    ----------
    private : True when built from a test on the certified lambda_hat's (`diagnose`); False for the
        teaching variant on noise-free certificates (`from_fit`).
    passed, reason, value, threshold : the test's own.
    n, domain, d_p, kappa, lam0, lam1, Rl, gamma, gamma_prime, s1, s2 : the inputs of (14) and (13).
    terms : the terms of the A numerator, the A denominator and B, in the order of (14a/b); empty when the
        test failed before (14) could be formed (lambda_hat_min = 0, (C1), beta, gamma').
    num_a, den_a, B_raw : 1 + the numerator's term, 1 - the denominator's terms, 1 + B's terms.
    fit_ratio, stretch : eta and (1 + eta)/(1 - eta) (NaN when not reached, inf when eta >= 1).
    A, B : the stretched sides, as in the test (A is NaN when den_a <= 0).
    binding_side : "A" or "B", the larger side ("A" when den_a <= 0); "" when no term could be formed.
    binding : the largest term of the binding side (the fit stretch counts as a term "fit tolerance").
    n_factor : roughly how many times more data (14) needs, holding kappa_hat, lambda_hat and the stretch
        fixed and letting gamma, s1, s2, gamma' shrink like 1/n; 1 when passed, NaN when not formed, inf when
        no n suffices (the stretch alone fails). core.teaching.whatif.smallest_n gives the exact answer from the fit.
    summary : one plain sentence with the numbers.
    """

    private: bool
    passed: bool
    reason: str
    value: float
    threshold: float
    n: int
    domain: str
    d_p: float
    kappa: float
    lam0: float
    lam1: float
    Rl: float
    gamma: float
    gamma_prime: float
    s1: float
    s2: float
    terms: tuple[Term, ...]
    num_a: float
    den_a: float
    B_raw: float
    fit_ratio: float
    stretch: float
    A: float
    B: float
    binding_side: str
    binding: Term | None
    n_factor: float
    summary: str

    def side_terms(self, place: str) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.place == place)


def _terms(test: StabilityTest, g: Geometry) -> tuple[Term, ...]:
    """The terms of (14b) or (14a), computed in the same order of operations as core.mechanisms.stability."""
    kappa, gamma, s1, s2, lam0, lam1, Rl, gp = (test.kappa, test.gamma, test.s1, test.s2, test.lam0, test.lam1,
                                                test.Rl, test.gamma_prime)
    if g.domain == "cube":
        sd, dp = math.sqrt(g.d_p), g.d_p
        return (
            Term("√d κ̂ γ/(1−γ)", "A numerator", sd * kappa * gamma / (1.0 - gamma)),
            Term("√d κ̂ s₁", "A denominator", sd * kappa * s1),
            Term("4 d s₂/λ₀", "A denominator", 4.0 * dp * s2 / lam0),
            Term("√d κ̂ s₁", "B", sd * kappa * s1),
            Term("2 d s₂/λ₀", "B", 2.0 * dp * s2 / lam0),
            Term("√d (λ₁/R_l) γ′/(1−γ′)", "B", sd * (lam1 / Rl) * gp / (1.0 - gp)),
        )
    S = s1 + s2 * max(g.r, g.r**2 / lam0)
    return (
        Term("κ̂ γ/(1−γ)", "A numerator", kappa * gamma / (1.0 - gamma)),
        Term("κ̂ (s₁ + s₂ max(r, r²/λ₀))", "A denominator", kappa * S),
        Term("κ̂ (s₁ + s₂ max(r, r²/λ₀))", "B", kappa * S),
        Term("(λ₁/R_l) γ′/(1−γ′)", "B", (lam1 / Rl) * gp / (1.0 - gp)),
    )


def _sides(terms: tuple[Term, ...], scale: float = 1.0) -> tuple[float, float, float]:
    """(num_a, den_a, B_raw) with every term divided by scale, summed in core.mechanisms.stability's order."""
    num_a, den_a, b = 1.0, 1.0, 1.0
    for t in terms:
        x = t.value / scale
        if t.place == "A numerator":
            num_a = num_a + x
        elif t.place == "A denominator":
            den_a = den_a - x
        else:
            b = b + x
    return num_a, den_a, b


def _n_factor(terms: tuple[Term, ...], stretch: float, threshold: float) -> float:
    """The least c >= 1 with the terms divided by c passing (14) at this stretch (to 1%)."""
    def value(c: float) -> float:
        num_a, den_a, b = _sides(terms, c)
        return math.inf if den_a <= 0 else max(num_a / den_a * stretch, b * stretch) ** 2 - 1.0

    if value(1.0) <= threshold:
        return 1.0
    if not stretch**2 - 1.0 < threshold:
        return math.inf
    lo, hi = 1.0, 2.0
    while value(hi) > threshold:
        lo, hi = hi, 2.0 * hi
    while hi / lo > 1.01:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if value(mid) <= threshold else (mid, hi)
    return hi


def _sci(x: float) -> str:
    """5·10⁵ style for large counts, plain below 10⁵."""
    if not math.isfinite(x):
        return str(x)
    if abs(x) < 1e5:
        return f"{x:,.0f}"
    e = math.floor(math.log10(abs(x)))
    mant = f"{x / 10**e:.2g}"
    if mant == "10":
        mant, e = "1", e + 1
    return f"{mant}·10{str(e).translate(SUPERSCRIPTS)}" if mant != "1" else f"10{str(e).translate(SUPERSCRIPTS)}"


def _summary(d: dict, terms: tuple[Term, ...], binding: Term | None, stretch: float) -> str:
    n, thr, kappa = _sci(d["n"]), d["threshold"], d["kappa"]
    if not terms:
        if d["reason"].startswith("the certified lower bound λ̂min is 0"):
            return (f"The certified λ̂min is 0 at n = {n}: the sample is too small to certify any curvature, "
                    "so (14) cannot be formed.")
        return f"The test (14) cannot be formed at n = {n}: {d['reason']}."
    largest = f"{binding.name} = {binding.value:.2g}" if binding is not None else ""
    if binding is not None and binding.name == "fit tolerance":
        head = f"The fit's gradient tolerance is too coarse for λ₀ = λ̂min + λ_reg = {d['lam0']:.3g}"
    elif binding is not None and "s₂" in binding.name and "κ̂" not in binding.name:
        head = f"λ₀ = λ̂min + λ_reg = {d['lam0']:.3g} is too small for n = {n}"
    elif kappa >= 10:
        head = f"κ̂ = {kappa:.3g} is too large for n = {n}"
    else:
        head = f"n = {n} is too small for κ̂ = {kappa:.3g}"
    factor = d["n_factor"]
    more = (f"; at this draw's certified bounds, about {_sci(factor * d['n'])} samples (×{factor:.3g}) would pass "
            "if they held — a rough scaling from this draw's noisy certificates, so it differs from the What-if's "
            "and the Planner's point, which are computed exactly from noise-free ones"
            if math.isfinite(factor) else "; no n passes at this fit tolerance")
    if d["den_a"] <= 0:
        alone = f"; the term {largest} alone is beyond the threshold {thr:.2g}" if binding.alone > thr else ""
        return f"{head}: the denominator of (14) is {d['den_a']:.2g}, not positive{alone}{more}."
    if d["passed"]:
        return (f"The test (14) passes with κ̂ = {kappa:.3g} at n = {n}: {d['value']:.2g} ≤ the threshold "
                f"{thr:.2g}; the largest term is {largest}.")
    if not math.isfinite(stretch):
        return f"{head}: the fit's tolerance ratio η = {d['fit_ratio']:.2g} is not below 1."
    if binding.alone > thr:
        return (f"{head}: the term {largest} alone puts (14)'s left side at {binding.alone:.2g}, above the "
                f"threshold {thr:.2g} (all terms: {d['value']:.2g}){more}.")
    return (f"{head}: the terms add up to {d['value']:.2g} > the threshold {thr:.2g}, the largest being "
            f"{largest}{more}.")


def diagnose(test: StabilityTest, g: Geometry, n: int, private: bool = True) -> Diagnosis:
    """Each term of (14b) (cube) or (14a) (ball) for this test, the side and term that bind, and a summary.

    The terms recompute the test's A, B and value exactly (same operations, same order). Private when `test`
    is the one computed from the certified lambda_hat's (as core.mechanisms.pipeline.run_private's): nothing here reads
    the data. `private` only labels the result (from_fit passes False).
    """
    d = dict(private=private, passed=test.passed, reason=test.reason, value=test.value, threshold=test.threshold,
             n=int(n), domain=g.domain, d_p=g.d_p, kappa=test.kappa, lam0=test.lam0, lam1=test.lam1, Rl=test.Rl,
             gamma=test.gamma, gamma_prime=test.gamma_prime, s1=test.s1, s2=test.s2, fit_ratio=test.fit_ratio)
    formed = all(math.isfinite(x) for x in (test.kappa, test.gamma, test.s1, test.s2, test.Rl, test.gamma_prime))
    terms = _terms(test, g) if formed else ()
    nan = math.nan
    num_a, den_a, b_raw = _sides(terms) if terms else (nan, nan, nan)
    eta = test.fit_ratio
    stretch = (1.0 + eta) / (1.0 - eta) if eta < 1 else (math.inf if eta >= 1 else nan)
    A = num_a / den_a * stretch if den_a > 0 and math.isfinite(stretch) else nan
    B = b_raw * stretch if math.isfinite(stretch) else nan
    binding_side, binding, n_factor = "", None, nan
    if terms:
        binding_side = "A" if not den_a > 0 or not (B > A) else "B"
        if not den_a > 0:
            pool = [t for t in terms if t.place == "A denominator"]
        else:
            pool = [t for t in terms if t.side == binding_side]
            if math.isfinite(stretch) or eta >= 1:
                pool.append(Term("fit tolerance", binding_side, stretch - 1.0))
        binding = max(pool, key=lambda t: t.value)
        n_factor = _n_factor(terms, stretch if math.isfinite(stretch) else 1.0, test.threshold)
        if not math.isfinite(stretch) and eta >= 1:
            n_factor = math.inf
    d.update(terms=terms, num_a=num_a, den_a=den_a, B_raw=b_raw, stretch=stretch, A=A, B=B,
             binding_side=binding_side, binding=binding, n_factor=n_factor)
    d["summary"] = _summary(d, terms, binding, stretch)
    return Diagnosis(**d)


def from_fit(problem: Problem, epsilon: float, delta: float, split: tuple[float, float, float],
                 n: int | None = None, accounting: str = "basic") -> Diagnosis:
    """Teaching, NOT private: the diagnosis of the test on noise-free certificates (core.teaching.whatif) at total
    (epsilon, delta) and sample size n (the fit's eigenvalues held fixed)."""
    from core.teaching.whatif import noise_free_test  # core.teaching.whatif is teaching-only; keep diagnose free of it

    n = problem.n if n is None else int(n)
    test = noise_free_test(problem, epsilon, delta, split, n, accounting)
    return diagnose(test, problem.geometry, n, private=False)


# ---------------------------------------------------------------- projection onto the domain (NOT private)

# Past this share of rows outside the domain the features are most likely on another scale than [-1, 1]^d (or
# the ball): the advice is then to rescale them, since projection has replaced most rows by points on the boundary.
MOSTLY_PROJECTED = 0.5
# core.estimator.fit's criterion: a Gram eigenvalue below 1e-12 of the largest is a null direction
RANK_TOLERANCE = 1e-12
def bottom_advice(loss: str) -> str:
    """What would lead to a release after bottom, in words, from public facts only (the loss)."""
    scale = ("; if y is in large units (dollars, say), divide it by a public bound on its typical size: the robust "
             "loss has almost no curvature for residuals far beyond 1, so unscaled responses leave nothing to "
             "certify" if loss == "robust" else "")
    return ("What would help: the fallback (“When the stability test (14) fails” → on), which releases objective "
            "perturbation's value with an interval instead of ⊥; more rows, or a larger ε (the Planner and the "
            f"What-if give the n and ε that pass); features scaled to the domain{scale}.")


RESCALE = ("rescale your features to [−1, 1] (divide each column by a bound on its size known without looking at "
           "these data, such as 120 for an age in years), or, with such a public bound R on ‖x‖₂, choose the ball "
           "domain with radius R")


@dataclass(frozen=True)
class Projection:
    """What projection onto the declared domain (core.estimator.geometry.project, before the fit of (1)) did to the
    rows.

    NOT private: every field is counted on the raw rows, for the data's owner.

    Attributes
    ----------
    rows, n : rows that lay outside the domain (Problem.clipped_rows), of n.
    domain, radius : the domain the fit used ("cube" or "ball") and the ball's radius.
    columns : the feature columns with a value outside [-1, 1] (on the cube; empty on the ball).
    collapsed : the raw design has full rank and the projected one has not: projection made the design
        rank-deficient (rows clipped onto the cube's corners can make columns equal or constant).
    """

    rows: int
    n: int
    domain: str
    radius: float
    columns: tuple[str, ...]
    collapsed: bool

    @property
    def share(self) -> float:
        return self.rows / self.n

    @property
    def mostly(self) -> bool:
        """Whether more than MOSTLY_PROJECTED of the rows lay outside the domain."""
        return self.share > MOSTLY_PROJECTED

    @property
    def where(self) -> str:
        return "the cube [−1, 1]ᵈ" if self.domain == "cube" else f"the ball ‖x‖₂ ≤ {self.radius:g}"

    @property
    def sentence(self) -> str:
        """k of n rows (p %) lay outside the covariate domain and were projected onto it."""
        return (f"{self.rows:,} of {self.n:,} rows ({self.share:.1%}) lay outside the covariate domain "
                f"({self.where}) and were projected onto it")

    @property
    def advice(self) -> str:
        """What to do when most rows were projected, or projection made the design singular ("" otherwise)."""
        outside = f" (columns with values outside [−1, 1]: {', '.join(self.columns)})" if self.columns else ""
        if self.mostly:
            return f"Most rows lay outside the domain{outside}: {RESCALE}."
        if self.collapsed:
            return f"Projection made the design rank-deficient{outside}: {RESCALE}."
        return ""


def _full_rank(X: NDArray[np.float64]) -> bool:
    """Whether X has no null direction, by core.estimator.fit's criterion on the Gram matrix (1/n) X^T X."""
    vals = np.linalg.eigvalsh(weighted_gram(X, np.ones(X.shape[0])))
    return bool(vals[0] > RANK_TOLERANCE * max(vals[-1], np.finfo(float).tiny))


def projection(raw_X: NDArray[np.float64], problem: Problem) -> Projection:
    """What projecting raw_X (the rows before projection, e.g. Dataset.X) onto problem's domain did. NOT private."""
    X = np.asarray(raw_X, dtype=np.float64)
    cube = problem.model.domain == "cube"
    columns = tuple(name for name, out in zip(problem.feature_names, np.any(np.abs(X) > 1.0, axis=0), strict=True)
                    if out) if cube and problem.clipped_rows else ()
    collapsed = problem.fit.status == RANK_DEFICIENT and problem.clipped_rows > 0 and _full_rank(X)
    return Projection(rows=problem.clipped_rows, n=problem.n, domain=problem.model.domain,
                      radius=problem.geometry.radius, columns=columns, collapsed=collapsed)


def fit_diagnosis(problem: Problem, where: Projection) -> str:
    """The fit's diagnosis (FitResult.diagnosis), saying so when projection onto the domain caused it. NOT private."""
    if not where.collapsed:
        return problem.fit.diagnosis
    return (f"projection onto the domain made the design rank-deficient: the raw feature columns have full rank, but "
            f"{where.rows:,} of {where.n:,} rows ({where.share:.1%}) lay outside {where.where}, and projected onto it "
            f"some columns are linear combinations of others; rather than dropping columns, {RESCALE}")
