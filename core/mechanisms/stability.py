"""Stage 3: the propose-test-release check, condition (14), with the constants (13).

Everything here is a function of the private lambda_hat_min, lambda_hat_max and public constants,
so the whole result is private. Readings of docs/method.md §12 (all the safe direction):
- beta = ||h''|| r^2 / ((1 - alpha r t) n lam0)            (13) prints it without r (Lemma 8.1);
- s2 = ||h''|| / (n (1 - beta) (1 - alpha r t)^2)           (13) prints no square (Lemma 8.2);
- gamma/(1 - gamma) in (14a/b), as in (11) and Propositions 8.2/8.3, not the printed gamma/(1+gamma);
- the lower side of (14b) uses 4 d_p s2/lam0 (Proposition 8.3), not 2 d_p s2/lam0;
- R(lam0) of (13)/(14) is read as Rl = R(lambda_hat_min) + lam_reg with R the recursion (10).

The fit is exact only to its certified gradient tolerance tau (core.estimator.fit), so two more private
quantities account for the solver (docs/privacy.md, "The fit's tolerance"):
- fit_slack E = l(lam0) + l(Rl), l(lam) = -ln(1 - r tau/lam)/r: the computed u^T theta of P_n and of any
  neighbour lie within l(lam0) and l(Rl) of the exact minimisers (core.estimator.fit's certificate);
- fit_ratio eta = 4 sqrt(d_p) kappa' delta_h / ((1 - delta_h)(1 - gamma)), delta_h = e^(r l(Rl)) - 1,
  kappa' = (lam1 (1 + phi(r t)) + G1/n)/Rl: omega computed at the fit is within a factor 1 +- eta of omega
  at the exact minimiser, for P_n and every neighbour.
The release's noise multiplier is (omega + E)/(1 - eta), and A and B are multiplied by (1 + eta)/(1 - eta),
so the test certifies the ratio of the multipliers actually used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.estimator.fit import certified_distance
from core.estimator.geometry import Geometry, phi_qsc
from core.estimator.rounding import TAU_FACTOR
from core.mechanisms.recursion import c1_holds, recursion_down, t_bound
from core.privacy.gaussian import check_epsilon_delta, normal_quantile

NAN = math.nan


@dataclass(frozen=True)
class StabilityTest:
    """Condition (14): passed, the value against the threshold, every constant of (13), the reason.

    Constants that cannot be formed (e.g. when lambda_hat_min = 0) are NaN or inf. Private.
    """

    passed: bool
    reason: str
    value: float
    threshold: float
    lam0: float
    lam1: float
    t: float
    beta: float
    gamma: float
    gamma_prime: float
    s1: float
    s2: float
    kappa: float
    Rl: float
    A: float
    B: float
    fit_slack: float
    fit_ratio: float
    epsilon: float
    delta: float


def threshold(epsilon: float, delta: float) -> float:
    """Right side of (14): 2 eps / (1 + Phi^{-1}(1 - delta/2)^2).

    Phi^{-1}(1 - delta/2) is computed as -Phi^{-1}(delta/2): 1 - delta/2 rounds to 1 once delta
    is below about 1e-16, which would make the quantile infinite.
    """
    return 2.0 * epsilon / (1.0 + normal_quantile(delta / 2.0) ** 2)


def solver_slack(lam: float, g: Geometry) -> float:
    """l(lam) = -ln(1 - r tau/lam)/r, tau = TAU_FACTOR G0: how far a certified fit can lie from the exact
    minimiser of data whose lambda_min + lam_reg >= lam (core.estimator.fit's certificate); inf when r tau >= lam."""
    return certified_distance(TAU_FACTOR * g.G0, g.r, lam)


def fit_tolerance(lam0: float, lam1: float, Rl: float, t: float, gamma: float, g: Geometry,
                  n: int) -> tuple[float, float]:
    """(E, eta) of the module docstring, from the private lam0, lam1, Rl and public constants."""
    slack = solver_slack(Rl, g)  # Rl <= lam0, so this bounds both sides
    E = solver_slack(lam0, g) + slack
    dh = math.expm1(g.r * slack)
    if not dh < 1:
        return E, math.inf
    kappa_nb = (lam1 * (1.0 + phi_qsc(g.r * t)) + g.G1 / n) / Rl
    return E, 4.0 * math.sqrt(g.d_p) * kappa_nb * dh / ((1.0 - dh) * (1.0 - gamma))


def stability_test(
    lambda_hat_min: float,
    lambda_hat_max: float | None,
    g: Geometry,
    n: int,
    lam_reg: float,
    epsilon: float,
    delta: float,
) -> StabilityTest:
    """Evaluate (14a) on the ball or (14b) on the cube; pass only if every side condition holds."""
    check_epsilon_delta(epsilon, delta, "the release")
    thr = threshold(epsilon, delta)
    out = dict(
        value=NAN, threshold=thr, lam0=lambda_hat_min + lam_reg, lam1=NAN, t=NAN, beta=NAN,
        gamma=NAN, gamma_prime=NAN, s1=NAN, s2=NAN, kappa=NAN, Rl=NAN, A=NAN, B=NAN, fit_slack=NAN, fit_ratio=NAN,
        epsilon=float(epsilon), delta=float(delta),
    )

    def fail(reason: str) -> StabilityTest:
        return StabilityTest(passed=False, reason=reason, **out)

    if lambda_hat_min <= 0 or lambda_hat_max is None:
        return fail("the certified lower bound λ̂min is 0: no curvature could be certified (too few rows for this ε, "
                    "or data with little or none)")
    if not c1_holds(lambda_hat_min, g, n, lam_reg):
        return fail("condition (C1) fails: the certified λ̂min is too small for this n")
    lam0, lam1 = lambda_hat_min + lam_reg, lambda_hat_max + lam_reg
    ar = g.alpha * g.r
    t = t_bound(lam0, g, n)
    out.update(lam1=lam1, t=t, kappa=lam1 / lam0)
    one_m = 1.0 - ar * t
    if not one_m > 0:
        return fail("the certified λ̂min is too small for this n (one row could move the fit too far: α r t ≥ 1)")
    beta = g.h2_sup * g.r**2 / (one_m * n * lam0)
    gamma = ar * t
    s1 = 1.0 / one_m - 1.0
    out.update(beta=beta, gamma=gamma, s1=s1)
    if not beta < 1:
        return fail("the certified λ̂min is too small for this n (one row could change the curvature too much: β ≥ 1)")
    s2 = g.h2_sup / (n * (1.0 - beta) * one_m**2)
    Rl = recursion_down(lambda_hat_min, g, n, lam_reg) + lam_reg
    out.update(s2=s2, Rl=Rl)
    if not Rl > 0:
        return fail("the certified λ̂min is too close to the (C1) boundary for this n (R(λ̂min) + λ_reg = 0)")
    gamma_p = ar * t_bound(Rl, g, n)
    out.update(gamma_prime=gamma_p)
    if not gamma_p < 1:
        return fail("the neighbouring data's curvature bound R(λ̂min) is too small for this n (γ′ ≥ 1)")
    kappa = lam1 / lam0
    if g.domain == "cube":  # (14b), p = inf, d_p = d
        sd, dp = math.sqrt(g.d_p), g.d_p
        num_a = 1.0 + sd * kappa * gamma / (1.0 - gamma)
        den_a = 1.0 - sd * kappa * s1 - 4.0 * dp * s2 / lam0
        B = 1.0 + sd * kappa * s1 + 2.0 * dp * s2 / lam0 + sd * (lam1 / Rl) * gamma_p / (1.0 - gamma_p)
    else:  # (14a), p = 2
        S = s1 + s2 * max(g.r, g.r**2 / lam0)
        num_a = 1.0 + kappa * gamma / (1.0 - gamma)
        den_a = 1.0 - kappa * S
        B = 1.0 + kappa * S + (lam1 / Rl) * gamma_p / (1.0 - gamma_p)
    if not den_a > 0:
        out.update(B=B)
        return fail("the certified condition number λ̂max/λ̂min is too large for this n "
                    "(the denominator of (14) is not positive)")
    E, eta = fit_tolerance(lam0, lam1, Rl, t, gamma, g, n)
    out.update(fit_slack=E, fit_ratio=eta)
    if not eta < 1:
        return fail("the fit's gradient tolerance is too coarse for this certified λ̂min")
    stretch = (1.0 + eta) / (1.0 - eta)
    A, B = num_a / den_a * stretch, B * stretch
    value = max(A, B) ** 2 - 1.0
    out.update(A=A, B=B, value=value)
    if not value <= thr:
        return fail("condition (14) fails: the ratio bound exceeds the threshold for this ε and δ")
    return StabilityTest(passed=True, reason="condition (14) holds", **out)
