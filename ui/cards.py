"""The Pipeline's stage cards: the fit (stage 0), the certified bounds (stages 1 and 2) and the test (14) (stage 3).
The release, the budget, the summary and tables are in ui.release_cards.

A card lays out metrics (ui.format), figures (ui.figures) and formulas (ui.formulas) of core results. The
stages' cards take the prepared problem in teaching mode and None in publish mode, where they show only
what Algorithm 5 releases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import streamlit as st

from core.data import Dataset
from core.data.folder import SourceData
from core.errors import PspError
from core.estimator.geometry import Geometry
from core.mechanisms.certificates import RecursiveBound
from core.mechanisms.pipeline import PrivateRun, Problem
from core.privacy.accounting import Budget
from core.teaching import whatif
from core.teaching.aids import WHATIF_EPS, Steps, falling_path, rising_path
from core.teaching.diagnosis import diagnose, fit_diagnosis, projection
from ui import cache, loaded, params, session
from ui.charts import chart, sketch
from ui.figures import eigenvalue_names, region_figure, staircase
from ui.format import Metric, helped, label, metric_row, num, opened, presenting, tagged
from ui.formulas import (
    FIT,
    LAMBDA_MAX,
    LAMBDA_MAX_FORMULAS,
    LAMBDA_MIN,
    LAMBDA_MIN_FORMULAS,
    TEST,
    THRESHOLD,
    Formulas,
    Stage,
    fit_formulas,
    test_formulas,
)
from ui.labels import capitalised, message
from ui.svg import bound_line, test_figure, theta_figure
from ui.theme import NOT_PRIVATE

# ---------------------------------------------------------------- the cards' parts


def fields(result: object, rows: list[tuple[str, str, str]]) -> list[Metric]:
    """(field, label, help) rows of a core result as metrics: the field's value (integers as they are), its label
    badged when core marks the field as not private."""
    def shown(value: object) -> str:
        return str(value) if isinstance(value, int) else num(value)

    return [(label(result, name, text), shown(getattr(result, name)), help_text) for name, text, help_text in rows]


def card_title(text: str) -> None:
    st.markdown(f"#### {text}")


@session.fragment
def formulas(f: Formulas) -> None:
    """A card's formulas in a closed expander, typeset only once it is opened: typesetting every card's formulas
    is a large part of drawing the page. A fragment, so opening it reruns only the expander. Hidden when presenting."""
    if presenting():
        return
    box = opened(f.title, f"formulas: {f.title}")
    if box is not None:
        with box:
            for line in f.latex:
                st.latex(line)
            if f.caption:
                st.caption(f.caption)


# ---------------------------------------------------------------- stage 0

FALLBACK_NOTE = ("; the fallback, which is on, releases objective perturbation's value instead, a coefficient of "
                 "these data as projected")


def stage0_card(problem: Problem, data: SourceData, j: int | None) -> None:
    """The fit θ(Pₙ), not private: teaching mode only."""
    f, g = problem.fit, problem.geometry
    with st.container(border=True):
        card_title(FIT.heading(f" {NOT_PRIVATE}"))
        st.caption(
            f"{capitalised(data.source)}: n = {f.n:,}, d = {f.d}, loss {g.loss.name}, domain {g.domain}. Computed from "
            "the data without privacy, for teaching only, and cached until the data or model settings change."
        )
        if not f.has_minimiser:
            why = (fit_diagnosis(problem, projection(data.X, problem)) if isinstance(data, Dataset) else
                   "a diagnosis reads every row in memory, and a curator's folder is read in blocks")
            then = FALLBACK_NOTE if loaded.fallback() else ""
            st.warning(f"No certified minimiser ({f.status.replace('_', ' ')}), a non-private diagnosis: "
                       f"{why}. The private stages take λ_min = 0, so Algorithm 5 releases nothing (⊥) through the "
                       f"certificates, exactly as for a neighbouring data set{then}.", icon=":material/report:")
            return
        sketch("theta", theta_figure, problem, data.theta_star, j)
        metric_row(fields(f, [
            ("grad_norm", "‖∇L‖₂",
             "How close the fit is to the exact minimiser: a bound on the gradient norm of (1) at θ(Pₙ), its "
             "rounding included"),
            ("lambda_min", "λmin(Pₙ)",
             "The data's least curvature: the smallest eigenvalue of the Hessian H"),
            ("lambda_max", "λmax(Pₙ)",
             "The data's greatest curvature: the largest eigenvalue of the Hessian H"),
            ("kappa", "κ", "How elongated the loss is: the condition number (λ_max + λ_reg)/(λ_min + λ_reg)"),
            ("iterations", "Newton steps", "Steps the damped Newton solver took to reach the minimiser"),
        ]) + fields(problem, [
            ("clipped_rows", "rows projected", "Rows outside the covariate domain 𝒳, moved onto it before the fit"),
            ("clipped_responses", "responses clipped",
             "Responses beyond the public bound |y| ≤ B, clipped to ±B before the fit"),
        ]))
        formulas(fit_formulas(g))


# ---------------------------------------------------------------- stages 1 and 2


def bound_metrics(b: RecursiveBound, which: str) -> tuple[list[Metric], list[Metric]]:
    """The result of one certificate beside the eigenvalue it bounds, and the count behind it (the details);
    which is 'min' or 'max'."""
    result = [
        (label(b, "lambda_hat", f"λ̂{which}"), num(b.lambda_hat), "The privately certified bound on the "
         "eigenvalue, the result of this stage"),
        (label(b, "statistic", f"λ{which}(Pₙ)"), num(b.statistic), "The true eigenvalue of the Hessian it bounds "
         "(from the data, not private)"),
        # covers compares the bound with the true eigenvalue, so it is not private either.
        (helped("bound holds"), "yes" if b.covers else "no", "Whether this draw's certificate is correct"),
    ]
    count = [
        (label(b, "N", "N"), str(b.N), "How many steps of the recursion the true eigenvalue survives: a count that "
         "one person changes by at most 1 (exact, from the data)"),
        (label(b, "noise", "Laplace draw"), num(b.noise), "The privacy noise added to that count, Lap(1/ε)"),
        (label(b, "N_hat", "N̂"), num(b.N_hat), "The noisy count N + Laplace noise: what is released"),
        (label(b, "k", "k"), num(b.k), "A safety margin subtracted from the noisy count so the bound holds "
         "with probability 1 − δ: ln(1/(2δ))/ε"),
        (label(b, "m", "m"), str(b.m), "How many recursion steps the bound is allowed to take: max(0, ⌊N̂ − k⌋)"),
    ]
    return result, count


@session.fragment
def details(text: str, key: str, metrics: list[Metric]) -> None:
    """A stage's intermediates in an expander, drawn once opened (fewer elements to redraw on every change).
    A fragment, so opening it reruns only the expander, on the same draw. Hidden when presenting."""
    if presenting():
        return
    box = opened(text, key, ":material/list:")
    if box is not None:
        with box:
            metric_row(metrics)


def stage_budget_caption(what: str, stage: Stage, epsilon: float, delta: float) -> None:
    st.caption(f"{what}: pure ε{stage.share}-DP with ε{stage.share} = {num(epsilon)}; "
               f"the bound fails with probability ≤ δ{stage.share} = {num(delta)}.")


@session.fragment
def bound_figures(b: RecursiveBound, paths: Callable[[], tuple[Steps, Steps]], which: str, key: str) -> None:
    """The staircase of the recursion and the number line of the eigenvalue beside its bound (teaching), drawn
    only once their expander is opened: the paths cost up to millions of steps, and two charts slow the page.
    A fragment, so opening it reruns only this expander. Hidden when presenting."""
    if presenting():
        return
    box = opened(tagged("The recursion step by step"), f"{key}_steps", ":material/stairs:")
    if box is None:
        return
    with box:
        names = eigenvalue_names(which)
        chart(staircase(*paths(), b, names), f"{key}_staircase", top=60)  # titles below the toolbar
        sketch(f"{key}_line", bound_line, b, names)


def lambda_min_card(run: PrivateRun, problem: Problem | None) -> None:
    """Stage 1; problem is None in publish mode, where only λ̂_min is shown."""
    b = run.lambda_min
    with st.container(border=True):
        card_title(LAMBDA_MIN.heading())
        stage_budget_caption("Private lower bound on the Hessian's smallest eigenvalue", LAMBDA_MIN, b.epsilon,
                             b.delta)
        if b.lambda_hat <= 0:
            then = ("the fallback, objective perturbation, releases instead" if run.release.status == "fallback"
                    else "nothing will be released")
            st.warning(f"λ̂_min = 0: no positive lower bound could be certified, so Algorithm 5 cannot release; {then}.",
                       icon=":material/block:")
        if problem is None:
            metric_row([(LAMBDA_MIN.name, num(b.lambda_hat),
             "The privately certified lower bound on the data's least curvature")])
        else:
            result, count = bound_metrics(b, "min")
            metric_row(result)
            details("The count, its noise and the margin", "lmin_details", count)
            bound_figures(b, lambda: (cache.lambda_min_path(loaded.data_spec(), loaded.model_spec(), problem),
                                      falling_path(problem, b.lambda_hat)), "min", "lmin")
            formulas(LAMBDA_MIN_FORMULAS)


def lambda_max_card(run: PrivateRun, problem: Problem | None) -> None:
    """Stage 2; problem is None in publish mode, where only λ̂_max is shown."""
    b = run.lambda_max
    with st.container(border=True):
        card_title(LAMBDA_MAX.heading())
        if b is None:
            st.info("Not reached: λ̂_min = 0, so Algorithm 4 does not run. Its budget (ε_b, δ_b) still counts as spent.")
        else:
            stage_budget_caption("Private upper bound on the Hessian's largest eigenvalue", LAMBDA_MAX, b.epsilon,
                                 b.delta)
            if problem is None:
                metric_row([(LAMBDA_MAX.name, num(b.lambda_hat),
                 "The privately certified upper bound on the data's greatest curvature")])
            else:
                result, count = bound_metrics(b, "max")
                metric_row(result)
                details("The count, its noise and the margin", "lmax_details", count)
                lam_hat_min = run.lambda_min.lambda_hat
                bound_figures(b, lambda: (rising_path(problem, lam_hat_min, b.statistic),
                                          rising_path(problem, lam_hat_min, b.lambda_hat)), "max", "lmax")
        if problem is not None:
            formulas(LAMBDA_MAX_FORMULAS)


# ---------------------------------------------------------------- stage 3


def test_status(run: PrivateRun, g: Geometry, n: int) -> None:
    t = run.test
    if t.passed:
        st.success(f"Passed: {t.reason}.", icon=":material/check_circle:")
        return
    st.warning(f"Failed: {t.reason}.", icon=":material/block:")
    if not math.isnan(t.lam1):  # the terms of (14) exist: say which one binds (private: certified bounds only)
        st.caption(f"Why, in numbers: {diagnose(t, g, n).summary}")


def test_details(run: PrivateRun) -> None:
    t = run.test
    metric_row([
        ("Value max(A, B)² − 1", num(t.value), "How far the fit may move when one person changes, as a "
         "ratio bound: the left side of (14)"),
        ("Threshold of (14)", num(t.threshold), f"The most the test allows: {THRESHOLD}"),
    ])
    sketch("test", test_figure, t.value, t.threshold, t.passed)
    details("The terms of (14), computed from the certified bounds", "test_details", [
        ("t", num(t.t), "How far θ can move when one row changes, at the certified curvature: t(λ₀) of (9)"),
        ("β", num(t.beta), "How much the curvature itself may change with one row, relative: β of (13)"),
        ("γ", num(t.gamma), "The Hessian's relative change along that move: α r t"),
        ("γ′", num(t.gamma_prime), "The same at the neighbouring data's curvature: α r t(R_l)"),
        ("s₁", num(t.s1), "First term of the ratio bound, (13)"),
        ("s₂", num(t.s2), "Second term of the ratio bound, (13)"),
        ("κ̂", num(t.kappa), "Condition number from the certified bounds, λ̂_max/λ̂_min (stage 0's κ is "
         "the true one)"),
        ("A", num(t.A), "Lower side of the ratio of the noise scales of two neighbouring data sets"),
        ("B", num(t.B), "Upper side of that ratio"),
    ])


def what_if(problem: Problem, b: Budget) -> None:
    """Would (14) pass at another ε or n? Noise-free certificates from the true eigenvalues (teaching)."""
    st.markdown(tagged("**What-if**"))
    st.caption(
        "The certificates replaced by their noise-free values (N̂ = N) from the true λ_min and λ_max, held "
        "fixed as n changes, under basic composition at this δ and split. At these points the test passes "
        "about half the time; the 95 % points below add the margin the certificates' noise needs."
    )
    keys = (loaded.data_spec(), loaded.model_spec(), b.delta_total, params.split())
    try:
        eps_min = cache.smallest_epsilon(*keys, problem)
        n_min = cache.smallest_n(*keys, b.epsilon_total, problem)
    except (PspError, OverflowError) as exc:  # the what-if explores ε up to 1e3, beyond the sliders
        st.warning(f"The what-if is not available for these settings: {message(exc)}")
        return
    metric_row(whatif_metrics(eps_min, n_min, "passes (noise-free, about 50 %)"))
    likely_points(problem, keys, b.epsilon_total)
    region(problem, keys, b.epsilon_total)


@session.fragment
def region(problem: Problem, keys: tuple, epsilon: float) -> None:
    """Where (14) passes over (n, ε) to n = 10¹², drawn once opened."""
    box = opened(tagged("Where the test passes over n and ε"), "whatif_region", ":material/grid_on:")
    if box is None:
        return
    with box:
        ns, passes = cache.pass_region(*keys, problem)
        chart(region_figure(ns, WHATIF_EPS, passes, problem.n, epsilon), "pass_region", 360)
        st.caption("Blue: (14) passes with noise-free certificates; grey: it fails. The star is this sample and ε.")


def whatif_metrics(eps_min: float | None, n_min: int | None, how: str) -> list[Metric]:
    return [
        (helped(f"smallest ε that {how}"), "not by 100" if eps_min is None else f"{eps_min:.3g}",
         "Smallest total ε (to 1 %) at which the test (14) passes on these data, at this δ and split"),
        (helped(f"smallest n that {how}"), f"beyond {whatif.N_MAX:.0e}" if n_min is None else f"{n_min:,}",
         "Smallest n (to 2 %) at which it passes at this ε, with the eigenvalues held fixed"),
    ]


@session.fragment
def likely_points(problem: Problem, keys: tuple, epsilon: float) -> None:
    """The smallest ε and n at which (14) passes with probability >= 0.95 over the certificates' Laplace noise
    (core.teaching.whatif.pass_probability): computed when opened, as they take up to seconds on large n and small ε."""
    box = opened(tagged("With a margin: where the test passes 95 % of the time"), "whatif_margin",
                 ":material/verified:")
    if box is None:
        return
    with box:
        try:
            eps95 = cache.smallest_epsilon(*keys, problem, level=0.95)
            n95 = cache.smallest_n(*keys, epsilon, problem, level=0.95)
        except (PspError, OverflowError) as exc:
            st.warning(f"Not available for these settings: {message(exc)}")
            return
        metric_row(whatif_metrics(eps95, n95, "passes 95 % of the time"))
        st.caption("Exact probabilities over the Laplace noise of stages 1 and 2 (the eigenvalues held fixed); "
                   "plan a release from these, not from the noise-free points.")


def test_card(run: PrivateRun, b: Budget, problem: Problem | None, g: Geometry, n: int) -> None:
    """Stage 3; problem is None in publish mode, where only the outcome and why (private) are shown."""
    with st.container(border=True):
        card_title(TEST.heading())
        test_status(run, g, n)
        if problem is not None:
            test_details(run)
            what_if(problem, b)
            formulas(test_formulas(problem.geometry.domain))
