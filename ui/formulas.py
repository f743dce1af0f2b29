"""The pipeline's stages and formulas as text: one stage list and one composition formula for every page.

STAGES names the stages of Algorithm 5 for the Pipeline's cards, the Budget card, the settings' help, the
Report and the teaching snapshot. COMPOSITION and its parts are the basic composition of the stages
(Lemma 2.5, docs/method.md §9). Each `Formulas` is the LaTeX of one card's "Formulas" expander. Text only: nothing here
draws on the page.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.estimator.geometry import Geometry
from core.mechanisms.release import FITTED, RIDGE
from ui.format import num


@dataclass(frozen=True)
class Stage:
    """One stage of Algorithm 5.

    key names its result in core.mechanisms.pipeline.PrivateRun ("fit" for stage 0) and its share of the budget in
    core.privacy.accounting.Budget; share is the subscript of that share (ε_a, ε_b, ε_c), empty for stages that
    spend nothing of their own. name is in Unicode, for headings and for labels alike (a tooltip's button is named
    after its label's raw text for screen readers).
    """

    number: int
    key: str
    name: str
    algorithm: str = ""
    mechanism: str = ""
    share: str = ""

    def heading(self, detail: str = "") -> str:
        """e.g. "Stage 4 · release of `x2` (Algorithm 5)" for detail " of `x2`". The name is in Unicode, not LaTeX:
        a heading in LaTeX makes every new tab fetch the maths renderer and its fonts."""
        return f"Stage {self.number} · {self.name}{detail}" + (f" ({self.algorithm})" if self.algorithm else "")

    @property
    def short(self) -> str:
        """The stage's number and name, e.g. "Stage 1 · λ̂min"."""
        return f"Stage {self.number} · {self.name}"

    @property
    def title(self) -> str:
        """The short name and the algorithm, e.g. "Stage 1 · λ̂min (Algorithm 2)"."""
        return self.heading()


FIT = Stage(0, "fit", "fit θ(Pₙ)")
LAMBDA_MIN = Stage(1, "lambda_min", "λ̂min", "Algorithm 2", "Laplace", "_a")
LAMBDA_MAX = Stage(2, "lambda_max", "λ̂max", "Algorithm 4", "Laplace", "_b")
TEST = Stage(3, "test", "stability test (14)")
RELEASE = Stage(4, "release", "release", "Algorithm 5", "Gaussian", "_c")
STAGES = (FIT, LAMBDA_MIN, LAMBDA_MAX, TEST, RELEASE)
BUDGET_STAGES = tuple(s for s in STAGES if s.share)  # the three shares of (ε, δ), in Budget's order

# ---------------------------------------------------------------- the budget

EPSILON_BASIC = "ε_a + ε_b + 2ε_c"
DELTA_BASIC = "exp(ε_a + ε_b)·(δ_a + δ_b) + (1 + exp(ε_c))·δ_c"
COMPOSITION = f"ε = {EPSILON_BASIC}, δ = {DELTA_BASIC}"  # basic composition of the stages (Lemma 2.5)
RELEASE_COST = "(2ε_c, (1 + exp(ε_c))·δ_c)"  # what the test (14) and the release cost together
ACCOUNTING_NAMES = {"basic": "basic composition", "pld": "privacy-loss distributions (dp_accounting)"}
ACCOUNTINGS = {  # how each accounting totals the stages
    "basic": f"{ACCOUNTING_NAMES['basic']} (Lemma 2.5): {COMPOSITION}",
    "pld": f"{ACCOUNTING_NAMES['pld']}: δ = δ_a + δ_b + δ_PLD(ε)",
}
CALIBRATIONS = {  # the Gaussian noise: σ(ε_c, δ_c) of the release, and the fallback's objective perturbation (15)
    "paper": "the paper's closed forms: σ(ε, δ) of (7), and (15)'s noise in the project's conservative reading "
             "(docs/method.md §12)",
    "analytic": "exact: the analytic Gaussian mechanism (Balle & Wang 2018) and (15)'s noise by its privacy profile, "
                "each never larger than the paper's",
}
PRIVATE_INTERVAL = "T ± z_{1−a/2} σ w̄"
# What every private interval covers, in words: shown wherever one is (docs/method.md §7); the fallback's interval
# without a certified curvature covers the ridge-regularised fit's coefficient (core.mechanisms.release.TARGETS) and
# says so.
INTERVAL_LABEL = "interval (privacy noise only)"
INTERVAL_LABELS = {FITTED: INTERVAL_LABEL, RIDGE: "interval of the ridge fit (privacy noise only)"}
POPULATION_LABEL = "population interval (approx.)"
POPULATION_MEANING = (
    "An interval for the coefficient in the population the rows were sampled from: it adds the sampling error of "
    "the n rows to the privacy noise, from the same private curvature bound, at no extra privacy cost."
)
INTERVAL_MEANING = (
    "The interval is for the coefficient fitted on these n rows: it covers it with the stated probability "
    "over the privacy noise only. It does not account for which people happened to be sampled, so it is not a "
    "confidence interval for a population parameter, which would be wider."
)
INTERVAL_MEANINGS = {FITTED: INTERVAL_MEANING, RIDGE: (
    "Too little curvature could be certified for an interval of the coefficient fitted on these n rows: this one is "
    "for the coefficient of the fallback's ridge-regularised fit, which the ridge pulls toward 0, and covers it with "
    "the stated probability over the privacy noise only.")}
ORACLE_INTERVAL = "T ± z_{1−a/2} σ ω"
THRESHOLD = "2ε_c / (1 + Φ⁻¹(1 − δ_c/2)²)"  # the right side of (14)


def split_help(stage: Stage) -> str:
    """What the split's weight of a budget stage buys, e.g. "ε_a = a/(a+b+c)·ε for λ̂min (Algorithm 2)"."""
    weight = stage.share[-1]
    if stage is RELEASE:
        return f"2ε{stage.share} = {weight}/(a+b+c)·ε for the {TEST.name} and the {stage.name} ({stage.algorithm})"
    return f"ε{stage.share} = {weight}/(a+b+c)·ε for {stage.name} ({stage.algorithm})"


def budget_row(stage: Stage, stage2_reached: bool = True) -> str:
    """A budget stage's row of the Budget card; the release's row holds the test (14) too."""
    if stage is RELEASE:
        return (f"{TEST.number}–{stage.number} · {TEST.name} and {stage.name} ({stage.algorithm}, "
                f"{stage.mechanism}): costs 2ε{stage.share}")
    missed = stage is LAMBDA_MAX and not stage2_reached
    return f"{stage.number} · {stage.name} ({stage.algorithm}, {stage.mechanism})" + (
        ", not reached but spent" if missed else "")


# ---------------------------------------------------------------- the cards' formulas


@dataclass(frozen=True)
class Formulas:
    """A card's formulas: the expander's title, its LaTeX lines, and a caption below them."""

    title: str
    latex: tuple[str, ...]
    caption: str = ""


def fit_formulas(g: Geometry) -> Formulas:
    """Stage 0: the estimator (1), its Hessian, and the domain's public constants."""
    return Formulas("Formulas: estimator (1) and its Hessian", (
        r"\theta(P_n) = \mathop{\mathrm{argmin}}_\theta \frac1n \sum_{i=1}^n h(\langle\theta, x_i\rangle, y_i)"
        r" + \frac{\lambda_{\rm reg}}{2}\|\theta\|_2^2 \qquad \text{(1)}",
        r"H = \frac1n\sum_{i=1}^n h''(\langle\theta(P_n), x_i\rangle, y_i)\, x_i x_i^\top, \qquad"
        r"\kappa = \frac{\lambda_{\max}(H) + \lambda_{\rm reg}}{\lambda_{\min}(H) + \lambda_{\rm reg}}",
    ), f"Constants of the domain (public): r = rad₂(𝒳) = {num(g.r)}, G₀ = {num(g.G0)}, "
       f"G₁ = {num(g.G1)}, d_p = {num(g.d_p)}, α = {g.alpha}, ρ = {g.rho}.")


LAMBDA_MIN_FORMULAS = Formulas("Formulas: (9), (C1), (10) and Algorithm 2", (
    r"t(\lambda) = \frac{1 - \sqrt{1 - 8\alpha r G_0/(\lambda n)}}{2\alpha r} \qquad \text{(9)}",
    r"\text{(C1)}\quad \lambda + \frac{\lambda_{\rm reg}}{\rho} \ge "
    r"\frac{4 G_0 \alpha r}{\rho(1-\rho) n} + \frac{G_1}{\rho n}",
    r"R(\lambda) = \max\Big\{0,\ \lambda\big[1 - \varphi\big(r\,t(\lambda + \lambda_{\rm reg})\big)\big]_+"
    r" - \frac{G_1}{n}\Big\}\ \text{if } \lambda > 0 \text{ and (C1) hold, else } 0,"
    r"\quad \varphi(s) = e^s - 1 \qquad \text{(10)}",
    r"N = \min\{N \ge 1 : R^N(\lambda_{\min}) = 0\},\quad \hat N = N + \mathrm{Lap}(1/\varepsilon_a),"
    r"\quad k = \ln(1/(2\delta_a))/\varepsilon_a",
    r"m = \max(0, \lfloor \hat N - k \rfloor),\quad"
    r"\hat\lambda_{\min} = \sup\{\lambda \ge 0 : R^m(\lambda) = 0\} \qquad \text{(Algorithm 2)}",
))

LAMBDA_MAX_FORMULAS = Formulas("Formulas: (12) and Algorithm 4", (
    r"R_\uparrow(\lambda) = \min\Big\{\lambda\big(1 + \varphi\big(r\,t(\hat\lambda_{\min}"
    r" + \lambda_{\rm reg})\big)\big) + \frac{G_1}{n},\ G_1\Big\} \qquad \text{(12)}",
    r"N = \min\{N \ge 0 : R_\uparrow^N(\lambda_{\max}) \ge G_1\},"
    r"\quad \hat N = N + \mathrm{Lap}(1/\varepsilon_b),\quad k = \ln(1/(2\delta_b))/\varepsilon_b",
    r"m = \max(0, \lfloor \hat N - k \rfloor),\quad \hat\lambda_{\max} = "
    r"\min\big(\inf\{\lambda \ge 0 : R_\uparrow^m(\lambda) \ge G_1\},\ G_1\big) \qquad \text{(Algorithm 4)}",
), "m uses N̂: the paper prints N − k in step iii, which would not be private (docs/method.md §5).")

_RATIO_BOUND = {
    "cube": r"A = \frac{1 + \sqrt{d_p}\,\kappa\frac{\gamma}{1-\gamma}}"
            r"{1 - \sqrt{d_p}\,\kappa s_1 - 4 d_p s_2/\lambda_0},"
            r"\ B = 1 + \sqrt{d_p}\,\kappa s_1 + \frac{2 d_p s_2}{\lambda_0}"
            r" + \sqrt{d_p}\frac{\lambda_1}{R_l}\frac{\gamma'}{1-\gamma'} \qquad \text{(14b)}",
    "ball": r"S = s_1 + s_2\max\big(r, \tfrac{r^2}{\lambda_0}\big),"
            r"\ A = \frac{1 + \kappa\frac{\gamma}{1-\gamma}}{1 - \kappa S},"
            r"\ B = 1 + \kappa S + \frac{\lambda_1}{R_l}\frac{\gamma'}{1-\gamma'} \qquad \text{(14a)}",
}


def test_formulas(domain: str) -> Formulas:
    """Stage 3: the constants (13) and the condition (14), its ratio bound (14b) on the cube, (14a) on the ball."""
    return Formulas("Formulas: constants (13) and condition (14)", (
        r"\lambda_0 = \hat\lambda_{\min} + \lambda_{\rm reg},\ \lambda_1 = \hat\lambda_{\max} + \lambda_{\rm reg},"
        r"\ t = t(\lambda_0),\ \gamma = \alpha r t,"
        r"\ \beta = \frac{\|h''\|_\infty r^2}{(1 - \alpha r t)\, n \lambda_0} \qquad \text{(13)}",
        r"s_1 = \frac{1}{1 - \alpha r t} - 1,\ s_2 = \frac{\|h''\|_\infty}{n (1-\beta)(1 - \alpha r t)^2},"
        r"\ \kappa = \frac{\lambda_1}{\lambda_0},\ R_l = R(\hat\lambda_{\min}) + \lambda_{\rm reg},"
        r"\ \gamma' = \alpha r\, t(R_l)",
        _RATIO_BOUND["cube" if domain == "cube" else "ball"],
        r"\max(A, B)^2 - 1 \le \frac{2\varepsilon_c}{1 + \Phi^{-1}(1 - \delta_c/2)^2} \qquad \text{(14)}",
    ), "Conservative readings (docs/method.md §12): γ/(1−γ) where (14) prints γ/(1+γ); β with 1 − αrt; s₂ with the "
       "square; 4d_p s₂/λ₀ on the lower side. The test also requires λ̂_min > 0, (C1) at λ̂_min, αrt < 1, β < 1, "
       "R_l > 0, γ' < 1 and positive denominators.")


RELEASE_FORMULAS = Formulas("Formulas: (3b), (11), (7) and Algorithm 5", (
    r"\Delta(P_n, u) = \frac{2}{n}\frac{G_0}{\sqrt d}\|H_{\rm reg}^{-1}u\|_1 \ \text{(cube)},\quad"
    r"\frac{2G_0}{n}\|H_{\rm reg}^{-1}u\|_2 \ \text{(ball)} \qquad \text{(3b)}",
    r"\omega(u \mid P_n) = \Delta(P_n, u)"
    r" + \frac{2G_0}{n(\lambda_{\min} + \lambda_{\rm reg})}\frac{g}{1-g},"
    r"\quad g = \alpha r\, t(\lambda_{\min} + \lambda_{\rm reg}) \qquad \text{(11)}",
    r"\sigma(\varepsilon, \delta) = \inf\Big\{s > 0 : \Phi\big(-s\varepsilon - \tfrac{1}{2s}\big)"
    r" + \Phi\big(-s\varepsilon + \tfrac{1}{2s}\big) \le \delta\Big\} \qquad \text{(7)}",
    r"T = u^\top\theta(P_n) + \sigma(\varepsilon_c, \delta_c)\,\omega(u \mid P_n)\, Z,"
    r"\ Z \sim \mathsf N(0, 1)"
    r"\ \text{if (14) holds, else } \bot \qquad \text{(Algorithm 5)}",
    r"\bar w = \frac{2G_0}{n\lambda_0(1-\gamma)} \ge \omega(u \mid P_n),\quad"
    r" T \pm z_{1-a/2}\,\sigma\,\bar w\ \text{(private)},"
    r"\quad T \pm z_{1-a/2}\,\sigma\,\omega\ \text{(oracle)}",
), "Both intervals are for u^T θ(P_n), the sample estimate, not the population parameter; the private "
   "one covers it with probability ≥ (1 − a)(1 − δ_a).")

COMPOSITION_FORMULAS = Formulas("Formulas: basic composition", (
    r"\varepsilon_{\rm total} = \varepsilon_a + \varepsilon_b + 2\varepsilon_c",
    r"\delta_{\rm total} = e^{\varepsilon_a + \varepsilon_b}(\delta_a + \delta_b) + (1 + e^{\varepsilon_c})\,\delta_c",
), "Lemma 2.5 with the two certificates as M₀ and the release as M₁ (Proposition 8.1's two Gaussian "
   "steps); Corollary 3.6 states (3ε, (1 + e^ε + e^(2ε))δ) for equal stages.")
