"""What the paper's figures claim and what our runs found, for the Experiments page.

CLAIMS quotes the paper verbatim (captions and sentences of its section 4; tests/test_page_experiments.py checks
each quotation against the paper's text) and states in plain words what reproduced, drawn from
docs/experiments.md. Text apart from code: it changes when the paper or a full run does, not when the page does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """One plain-words conclusion: its verdict ("Reproduced", "HYPOTHESIS, not proven", ...) and what it says."""

    verdict: str
    text: str


@dataclass(frozen=True)
class Claim:
    """A figure of the paper: its number, its caption and the sentences of section 4 about it (verbatim, or None
    where the paper's text has no caption), and what our runs found."""

    number: int
    caption: str | None
    passages: tuple[str, ...]
    findings: tuple[Finding, ...]


_TRANSITION = (
    r"In Figures 6 and 7, we see results roughly consistent with these expectations. Both figures exhibit the "
    r"transition somewhere in the neighborhood of  $n = 4 \cdot 10^5$  datapoints, where the error in using "
    r"Algorithm 5 drops substantially, reflecting that it is possible to certify stability of the local modulus of "
    r"continuity  $\sup_{x \in \mathcal{X}} u^T \nabla^2 L_n(\theta(P_n))^{-1}x$ ."
)
_VARIANT = (
    r"We modify Algorithm 5 slightly, so that if the estimated minimal eigenvalue  $\hat{\lambda} = 0$ , the method "
    r"instead uses objective perturbation with privacy parameter  $\varepsilon/2$  (as we use half of the privacy "
    r"budget  $\varepsilon$  to estimate  $\hat{\lambda}$ )."
)
_SAFE_TEST = Finding(
    "Not reproduced with safe constants",
    "On the SYNTHETIC California file (183,399 made-up records in the census format, no census record; its fit has "
    "κ ≈ 292 and a female coefficient of −0.277, close to the paper's ≈ 300 and ≈ −0.27), the stability test (14) "
    "passes only from n ≈ 2.3·10⁹ on the cube [−1, 1]¹⁷ and from n ≈ 3.1·10⁸ on the ball of radius 3 (the paper's "
    "encoding, which the census figures use), at ε = 4 "
    "(at ε = 1: 9.0·10⁹ and 1.2·10⁹). So Algorithm 5 without fallback returns ⊥ on the whole grid of the figure. "
    "Proven, with the project's conservative readings (docs/method.md §12): the binding term of (14) is "
    "√d_p·κ̂·s₁.",
)
_HYPOTHESIS = Finding(
    "HYPOTHESIS, not proven",
    "The noise-free certificate λ̂min turns positive near n ≈ 4.2·10⁵ (cube, ε = 4; 2.3·10⁵ on the ball), which "
    "is where the paper's transition sits. The paper's variant (objective perturbation whenever λ̂min = 0, "
    "Algorithm 5 otherwise) changes branch there, which fits the printed figures if its test used less conservative "
    "constants than the project's (docs/method.md §12). The safe test needs about 5,000 times more data.",
)
_FULL_RUN = Finding(
    "Measured in the full run",
    "On the SYNTHETIC California file (12 repetitions, ε = 2, 4, 8, n from 10⁴ to 2·10⁶), Algorithm 5 alone is ⊥ "
    "in all 252 runs. The paper's rule (objective perturbation while λ̂min = 0), at our budget or at its split, "
    "releases until λ̂min turns positive — at n = 4·10⁵ for ε = 4 and 8, 10⁶ for ε = 2 — and is ⊥ from there, "
    "because (14) still fails: the paper's curves change at that very n. Objective perturbation at the full ε is "
    "the most accurate private method on these data; the app's default, which falls back to it on the budget "
    "Algorithm 5 has not spent, is 1.16–1.17× less accurate, draw for draw.",
)
_FALLBACK = Finding(
    "In the app",
    "Publish mode on census data therefore falls back to objective perturbation by default, on the unspent "
    "budget, with an interval from a private estimate of the curvature at the released point, and says so "
    "(docs/privacy.md, \"Algorithm 5 with fallback\").",
)

CLAIMS: dict[str, Claim] = {
    "fig1": Claim(
        1,
        None,
        (
            r"Because Algorithm 5 outputs  $\perp$  when it cannot certify  $\lambda_{\min}(P_n) > 0$ , our first "
            r"experiment investigates the relative error  $|\hat{\lambda} - \lambda_{\min}(P_n)|/\lambda_{\min}(P_n)$"
            r"  in the eigenvalue Algorithm 2 releases.",
            r"We show results in Figure 1, varying the sample size ratio n/d and for dimensions d = 5, 10, 20and "
            r"fixing  $\varepsilon = 1$ ,  $\delta = 10^{-6}$ .",
            r"This figure makes clear that, while the procedure eventually achieves quite small error, the sample "
            r"sizes necessary may be quite large for most tasks hence, in the sequel, our focus on census data with "
            r"relatively small numbers of covariates.",
        ),
        (
            Finding("Reproduced", "The shape: Algorithm 2 certifies nothing (λ̂min = 0) below a threshold in n/d, "
                    "the same for every d, and above it the relative error falls like 1/n, halving each time n "
                    "doubles. The full run (25 repetitions, d = 5, 10, 20) gives 0.35–0.36 at n/d = 800, 0.17 at "
                    "1600, 0.08 at 3200, 0.040 at 6400 and 0.020 at 12800, for every d."),
            Finding("Different in detail", "The threshold is higher here: λ̂min = 0 in 92–100 % of runs at n/d = 400 "
                    "and never from 800 (about n/d ≈ 450), where the paper's Fig. 1 shows "
                    "n/d ≤ 160 (docs/method.md §11). With "
                    "k = ln(1/(2δ))/ε ≈ 13 the count needs about 13 recursion steps below λmin before anything is "
                    "certified; the paper's exact recursion constants or split may differ."),
        ),
    ),
    "fig2": Claim(
        2,
        r"Error  $|\theta_1^{\star} - \hat{\theta}_1(P_n)|$  in the first-coordinate of the target  $\theta(P_n)$  "
        r"versus sample size for varying dimensions d = 5, 10, 20 in a robust regression experiment, where  "
        r"$||\theta^{\star}||_2 = 1$ . The method Local (orange triangle) is Algorithm 5; SGD is DPSGD, non-private "
        r"is the non-private idealized version of the methods here (item 2), objective is objective perturbation "
        r"(15), and naive is the naive output perturbation estimator. Objective perturbation and the methods here "
        r"exhibit the best performance, with Alg. 5 exhibiting a noticeable improvement at sufficiently large sample "
        r"size.",
        (
            r"Based on our theoretical results and Fig. 1, we expect that Algorithm 5 should exhibit a type of "
            r"thresholding behavior: when n is too small, we cannot certify that  $\lambda_{\min}(P_n)$  is large "
            r"enough to guarantee stability, and so must release statistics with substantial noise.",
            r"Figures 2 and 3 show the results of these experiments for different dimensions d; the results are "
            r"consistent with our expectations: the non-private method has (by far) the best performance, while "
            r'Algorithm 5 eventually achieves errors near the "best possible" non-private release.',
        ),
        (
            Finding("Reproduced", "The threshold: in the full run (25 repetitions, every method) Algorithm 5 is ⊥ "
                    "up to n = 10⁴, 3·10⁴ and 10⁵ for d = 5, 10 and 20, and releases in every repetition from "
                    "3·10⁴, 10⁵ and 3·10⁵. The non-private oracle is the most accurate everywhere and naive output "
                    "perturbation by far the worst."),
            Finding("Not reproduced with safe constants", "The improvement over objective perturbation: at "
                    "n = 10⁶ Algorithm 5's privacy error is 1.4× larger than objective perturbation's at d = 5 "
                    "(1.2e-4 against 8.6e-5), equal at d = 10, and 1.9× smaller only at d = 20 (8.2e-5 against "
                    "1.5e-4). It stays 5–9× above the oracle: the conservative constants of docs/method.md §12 and a "
                    "third of ε for "
                    "the release. Against θ* (the error the paper plots) every method but output perturbation and "
                    "default DP-SGD sits at the sampling error of θ(Pₙ), about twice the score-attack rate."),
            Finding("DP-SGD", "With default hyper-parameters it levels off near 2·10⁻³; tuned on the fit over a "
                    "small grid, as the paper did (not private), it reaches 3·10⁻⁴ at n = 10⁶."),
        ),
    ),
    "fig3": Claim(
        3,
        r"Identical to Fig. 2, except that  $\|\theta^*\|_2 = 5$ . Note that the gap in performance between "
        r"objective perturbation and Alg. 5 is larger than in the case that  $\|\theta^*\|_2 = 1$ .",
        (
            r"While prior work suggests objective perturbation (15) should be a competitive and easy-to-use "
            r"algorithm [15, 29], that it regularizes its parameter  $\theta$  around 0 suggests that there should "
            r"be a gap between its performance and the methods here as  $\|\theta^{\star}\|_2$  grows.",
        ),
        (
            Finding("Reproduced", "The same pass points as Fig. 2 (the full run, 10 repetitions): Algorithm 5 "
                    "releases in every repetition from n = 3·10⁴, 10⁵ and 3·10⁵ for d = 5, 10 and 20. Naive output "
                    "perturbation suffers most from the larger norm (0.07–0.15 against 0.013–0.036 at ‖θ*‖ = 1)."),
            Finding("Not reproduced with safe constants", "A larger gap over objective perturbation than at "
                    "‖θ*‖ = 1: at n = 10⁶ the two are within 5 % at d = 5 and 10, and Algorithm 5 is 1.3× better "
                    "at d = 20 (1.9× at ‖θ*‖ = 1); at n = 3·10⁵, d = 5, objective perturbation is 1.8× better."),
        ),
    ),
    "fig4": Claim(
        4,
        r"Error  $|\hat{\theta}_j - \theta_j^*|$  as a function of the privacy parameter  $\varepsilon$  for "
        r"simulated robust regression estimating a single (random) coordinate j. (a) Small norm  "
        r"$\|\theta^*\|_2 = 1$  (b) Larger norm  $\|\theta^*\|_2 = 6$ . Dimension d = 10 in both and sample size  "
        r"$n = 10^5$ .",
        (
            r"The plots are consistent with our observations and expectations to this point: differentially private "
            r"SGD and objective perturbation both exhibit reasonable performance, but are worse than the local "
            r"release Algorithm 5 for estimating a single coordinate.",
            r"On the other hand, objective perturbation is very competitive when  $\theta^*$  is small, but has some "
            r"degradation as the norm of  $\theta^*$  increases (plots (b) in each figure).",
        ),
        (
            Finding("Pass point", "In the full run (25 repetitions) Algorithm 5 is ⊥ in every repetition at "
                    "ε ≤ 2 and releases in every one from ε = 4 (n = 10⁵, d = 10), so it has no point below ε = 4; "
                    "the paper shows it ahead of the other methods at every ε."),
            Finding("Partly reproduced", "Where it releases, Algorithm 5 beats objective perturbation at ‖θ*‖ = 6 "
                    "(1.6× at ε = 4, 1.3× at ε = 8) and ties it at ‖θ*‖ = 1 — objective perturbation degrades as "
                    "the norm grows — but at ε = 16 they tie (‖θ*‖ = 6) or objective perturbation wins "
                    "(‖θ*‖ = 1). DP-SGD with defaults stays near 0.0025 at every ε; tuned on the fit (not "
                    "private) it reaches 0.0005–0.001."),
        ),
    ),
    "fig5": Claim(
        5,
        r"Error  $\|\theta - \theta^{\star}\|_2$  as a function of the privacy parameter  $\varepsilon$  for "
        r"simulated robust regression estimating entire parameter  $\theta^{\star} \in \mathbb{R}^d$ , where d = 10, "
        r"and sample size  $n = 10^5$ . (a) Small norm  $\|\theta^{\star}\|_2 = 1$  (b) Larger norm  "
        r"$\|\theta^{\star}\|_2 = 6$ .",
        (
            r"Finally, Figures 4 and 5 investigate the error  $\hat{\theta} - \theta(P_n)$  for single coordinates "
            r"(Fig. 4) and the full parameter vector  $\theta(P_n)$ , respectively, as  $\varepsilon$  increases, for "
            r"fixed sample size  $n = 10^5$  and dimension d = 10.",
        ),
        (
            Finding("Reproduced", "In the full run (25 repetitions, every method of the figure in its full-vector "
                    "form) Algorithm 3 releases at every ε and is ahead of objective perturbation at every ε but "
                    "the smallest (ε = 0.5, ‖θ*‖ = 1), by 1.05–1.18× at ‖θ*‖ = 1 and 1.14–1.31× at ‖θ*‖ = 6; "
                    "naive output perturbation is far behind (its ridge's bias)."),
            Finding("Different", "DP-SGD is ahead of every private method at ε ≤ 1 (ℓ2 privacy error 0.011 "
                    "against 0.016–0.035) and levels off near 0.01 from ε = 2, tuned or not; the paper shows it "
                    "behind. The non-private oracle is twice as accurate as Algorithm 3. Against θ* every method "
                    "but output perturbation sits at 0.020–0.021 from ε = 2, the sampling error of θ(Pₙ)."),
        ),
    ),
    "fig6": Claim(
        6,
        r"Estimation error versus sample size n for the parameter  $\theta_j$  corresponding to the SEX indicator "
        r"in predicting income levels using California survey data with approximate 95% confidence intervals based "
        r"on 25 experiments. Left: privacy level  $\varepsilon = 2$ . Middle: privacy level  $\varepsilon = 4$ . "
        r"Right: privacy level  $\varepsilon = 8$ . The true parameter  $\theta_j(P_n) \approx -.27$ . The "
        r'"Non-private" estimator is the non-private idealized version (item 2), objective perturbation '
        r"corresponds to (15), and Local is Algorithm 5.",
        (_VARIANT, _TRANSITION),
        (_SAFE_TEST, _FULL_RUN, _HYPOTHESIS, _FALLBACK),
    ),
    "fig7": Claim(
        7,
        r"Estimation error versus sample size n for the parameter  $\theta_j$  corresponding to amount of schooling "
        r"in predicting income levels using Michigan survey data with approximate 95% confidence intervals based on "
        r"25 experiments. Left: privacy level  $\varepsilon = 2$ . Middle: privacy level  $\varepsilon = 4$ . Right: "
        r"privacy level  $\varepsilon = 8$ . The true parameter  $\theta_j(P_n) \approx 3.0$ . The legend matches "
        r"that in Fig. 6.",
        (
            _VARIANT,
            r"Second, when the parameter  $\theta_j(P_n)$  of interest is large, we expect to see a larger gap in "
            r"performance between objective perturbation and the local noise addition procedures we develop here.",
            _TRANSITION,
        ),
        (
            Finding("Measured in the full run", "On the SYNTHETIC Michigan file (46,108 made-up records; the "
                    "population's schooling coefficient near 3.0, κ ≈ 450), 12 repetitions at ε = 2, 4, 8 and n "
                    "from 10⁴ to 2·10⁶: Algorithm 5 alone is ⊥ in all 252 runs. The paper's rule releases by "
                    "objective perturbation while λ̂min = 0 and is ⊥ once λ̂min > 0 (from n = 10⁶ at every ε), "
                    "since (14) still fails. Objective perturbation at the full ε is the most accurate private "
                    "method; its errors are about five times Fig. 6's, the coefficient being ten times larger."),
            _SAFE_TEST, _HYPOTHESIS, _FALLBACK,
        ),
    ),
}


# ---------------------------------------------------------------- names


def figure_number(figure: str) -> int | None:
    """The paper's number of a figure name such as "fig6", from CLAIMS or the name itself."""
    if figure in CLAIMS:
        return CLAIMS[figure].number
    match = re.fullmatch(r"fig(\d+)", figure)
    return int(match.group(1)) if match else None


def tab_label(figure: str) -> str:
    number = figure_number(figure)
    return f"Fig. {number}" if number is not None else figure
