"""Planner page: is a private release worth its budget? A plan from public assumptions only (core.teaching.planner).

The page reads no data and draws no noise, so it spends no budget and is open in both modes. The budget, the
interval level and the model (domain, radius, λ_reg) are the shared settings of ui.params, so they are in the URL
and are the Pipeline's; the assumed n, d, loss and eigenvalues are this page's own widgets, kept in the session
only (they describe data not yet loaded, so they must not change the loaded data's settings). Layout only: every
number comes from core.teaching.planner, the figure from ui.planner_figures.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import streamlit as st

from core.data.encoding import RADII_WORDS
from core.errors import PspError
from core.estimator.geometry import DOMAINS
from core.estimator.losses import LOSSES
from core.teaching.frontier import GRID_TOP, FrontierPoint, read_frontier
from core.teaching.planner import (
    MAX_EPSILON,
    PLAN_NOTE,
    Assumptions,
    Plan,
    check_target,
    lambda_min_from_kappa,
    largest_table,
    plan,
    smallest_epsilon,
    smallest_n,
    smallest_table_epsilon,
    sweep_n,
)
from core.teaching.whatif import N_MAX
from ui import controls, keys, params, release_cards, session
from ui.boot import through_navigation
from ui.charts import chart
from ui.experiment_runs import results_dir
from ui.format import metric_row, num, opened, percent
from ui.labels import message
from ui.planner_figures import frontier_figure, half_width_figure

through_navigation()  # a deep link's first run on a fresh server goes through app.py

PLAN = ":blue-badge[plan · reads no data]"
CURVATURE = {"lambda": "λmin and λmax", "kappa": "κ and λmax"}
DEFAULTS = {  # this page's own widgets; a robust fit on [-1, 1]^5 has eigenvalues near 1/6 (E xx^T = I/3)
    "planner_n": 100_000, "planner_d": 5, "planner_loss": "robust", "planner_curvature": "lambda",
    "planner_lambda_min": 0.1, "planner_lambda_max": 0.15, "planner_kappa": 1.5, "planner_target": 0.01,
}


# ---------------------------------------------------------------- settings


def assumption_controls() -> None:
    """n, d, the loss and the assumed curvature: number boxes without limits, so the planner (core) checks every
    value."""
    # n and d start from the app's own settings (public: typed or linked, as the sidebar shows them).
    for key, value in {**DEFAULTS, "planner_n": params.get("n"), "planner_d": params.get("d")}.items():
        st.session_state.setdefault(key, value)
    col_n, col_d, col_loss, col_c = st.columns(4)
    col_n.number_input("Sample size n", step=1_000, key="planner_n", persist_state="session",
                       help=f"Rows in the data to be released from, above d and at most {N_MAX:.0e}")
    col_d.number_input("Dimension d", step=1, key="planner_d", persist_state="session",
                       help="Number of features (covariates) of the regression (1)")
    col_loss.radio("Loss", tuple(LOSSES), key="planner_loss", horizontal=True, persist_state="session",
                   help="robust regression (Examples 1 and 3) or logistic regression (Examples 2 and 4)")
    col_c.segmented_control("Curvature given as", tuple(CURVATURE), format_func=CURVATURE.get, required=True,
                            key="planner_curvature", persist_state="session",
                            help="The assumed extreme eigenvalues of the Hessian of (1) at its minimiser, without "
                            "λ_reg; or its condition number κ = λmax/λmin with λmax")
    by_kappa = st.session_state["planner_curvature"] == "kappa"
    col_min, col_k, col_max, col_t = st.columns(4)
    col_min.number_input("Assumed λmin", step=0.01, format="%g", key="planner_lambda_min", disabled=by_kappa,
                         persist_state="session", help="Smallest eigenvalue of the Hessian, > 0 and at most λmax")
    col_k.number_input("Assumed κ", step=0.5, format="%g", key="planner_kappa", disabled=not by_kappa,
                       persist_state="session", help="Condition number λmax/λmin ≥ 1")
    col_max.number_input("Assumed λmax", step=0.01, format="%g", key="planner_lambda_max", persist_state="session",
                         help="Largest eigenvalue of the Hessian, at most G₁ = r²·sup h″, which bounds every Hessian")
    col_t.number_input("Target half-width", step=0.001, format="%g", key="planner_target", persist_state="session",
                       help="The half-width of the private interval you need: the page finds the smallest ε and n")


def model_controls() -> None:
    """The shared model settings and the level (ui.params settings, as on the Pipeline page)."""
    col_dom, col_r, col_reg, col_lev = st.columns(4)
    domain = col_dom.radio("Covariate domain 𝒳", DOMAINS, key="domain", horizontal=True,
                           help="cube [−1, 1]^d (test (14b)) or ball ‖x‖₂ ≤ R (test (14a)), docs/method.md §2")
    col_r.number_input("Ball radius R", value=None, min_value=0.0, step=0.5, format="%g", key="radius",
                       disabled=domain != "ball", placeholder="empty = √d, the ball around the cube",
                       help="R = rad₂(𝒳) of the ball domain, so G₀ = R·sup|h′| and G₁ = R²·sup h″ (docs/method.md §2). "
                       "Census "
                       f"income rows lie in R = {RADII_WORDS}")
    col_reg.number_input("λ_reg", min_value=0.0, step=1e-3, format="%g", key="lam_reg",
                         help="λ_reg ≥ 0 of the ridge term (λ_reg/2)‖θ‖² in the estimator (1)")
    col_lev.slider("Interval level 1 − a", min_value=0.50, max_value=0.99, step=0.01, key="level",
                   help="Level 1 − a of the private interval T ± z σ w̄ (docs/method.md §7)")


def assumptions() -> Assumptions:
    """The settings as core.teaching.planner's Assumptions (InputError names the control at fault)."""
    ss = st.session_state
    lam_max = ss["planner_lambda_max"]
    by_kappa = ss["planner_curvature"] == "kappa"
    lam_min = lambda_min_from_kappa(ss["planner_kappa"], lam_max) if by_kappa else ss["planner_lambda_min"]
    domain = params.get("domain")
    return Assumptions(
        n=ss["planner_n"], d=ss["planner_d"], lambda_min=lam_min, lambda_max=lam_max, epsilon=params.get("epsilon"),
        delta=params.get("delta"), loss=ss["planner_loss"], domain=domain,
        radius=params.get("radius") if domain == "ball" else None, lam_reg=params.get("lam_reg"), split=params.split(),
        accounting=params.get("accounting"), calibration=params.get("calibration"), level=params.get("level"),
    )


# ---------------------------------------------------------------- computations (deterministic, no data, no noise)


@st.cache_resource(show_spinner="Planning…", max_entries=64)
def cached_plan(key: tuple, _a: Assumptions) -> Plan:
    return plan(_a)


@st.cache_resource(show_spinner="Planning: the half-width against n…", max_entries=32)
def cached_sweep(key: tuple, _a: Assumptions) -> tuple[Plan, ...]:
    return sweep_n(_a)


@st.cache_resource(show_spinner="Planning: the smallest ε for the target…", max_entries=64)
def cached_epsilon(key: tuple, target: float, _a: Assumptions) -> float | None:
    return smallest_epsilon(_a, target)


@st.cache_resource(show_spinner="Planning: the smallest ε for an informative table…", max_entries=32)
def cached_table_epsilon(key: tuple, _a: Assumptions) -> float | None:
    return smallest_table_epsilon(_a)


@st.cache_resource(show_spinner="Planning: how many coefficients a table may hold…", max_entries=32)
def cached_table_rows(key: tuple, _a: Assumptions) -> int | None:
    return largest_table(_a)


@st.cache_resource(show_spinner="Planning: the smallest n for the target…", max_entries=64)
def cached_n(key: tuple, target: float, _a: Assumptions) -> int | None:
    return smallest_n(_a, target)


# ---------------------------------------------------------------- results


def plan_view(p: Plan) -> None:
    st.markdown(f"#### The plan {PLAN}")
    verdict = "passes" if p.passed else "fails (⊥)"
    half = num(p.half_width) if p.half_width is not None else "— (⊥, no interval)"
    metric_row([
        ("Test (14), noise-free certificates", verdict, "Condition (14) at λ̂min and λ̂max with N̂ = N (no noise)"),
        ("P(test passes)", percent(p.pass_probability, sep=" "),
         "Probability that (14) passes under the certificates' Laplace noise (Algorithms 2 and 4)"),
        (f"Half-width at level {p.assumptions.level:g}", half, "z₁₋ₐ/₂ · σ(ε_c, δ_c) · w̄ (docs/method.md §7), at the "
         "noise-free λ̂min, widened by the fit's certified tolerance as the release does"),
        ("A table's half-width, all d rows", table_words(p),
         "Every row of a regression table of all d coefficients (one release of the same budget: the Gaussian step "
         "on the whole vector, intervals that hold at once) at the noise-free certificate; where the test fails, "
         "the fallback's likely range for each row (the preview's forecast of a table)"),
    ])
    metric_row([
        ("λ̂min (noise-free)", num(p.lambda_hat_min), "Algorithm 2's certified lower bound with N̂ = N"),
        ("λ̂max (noise-free)", num(p.lambda_hat_max), "Algorithm 4's certified upper bound with N̂ = N"),
        ("σ(ε_c, δ_c)", num(p.sigma), f"{p.assumptions.calibration} calibration of the release stage (7)"),
        ("w̄", num(p.w_bar), "2G₀/(n λ̂₀ (1 − γ)), the private bound on ω(u | Pₙ) of (11), widened by the fit's "
         "certified tolerance"),
    ], gap="small")
    release_cards.forecast_notice(None if p.forecast is None else dataclasses.asdict(p.forecast), p.assumptions.level)
    table_suggestion(p.assumptions)
    b = p.budget
    st.caption(
        f"{p.test.reason[0].upper()}{p.test.reason[1:]}. Stages: λ̂min (ε_a, δ_a) = ({num(b.lambda_min.epsilon, 4)}, "
        f"{num(b.lambda_min.delta, 3)}), λ̂max (ε_b, δ_b) = ({num(b.lambda_max.epsilon, 4)}, "
        f"{num(b.lambda_max.delta, 3)}), release (ε_c, δ_c) = ({num(b.release.epsilon, 4)}, "
        f"{num(b.release.delta, 3)}), {b.accounting} accounting; z₁₋ₐ/₂ = {num(p.z, 4)}."
    )


def table_words(p: Plan) -> str:
    """A table's rows' half-width: exact where the test passes, else the forecast's likely range."""
    if p.table_half_width is not None:
        return num(p.table_half_width)
    f = p.table_forecast
    if f is None or f.low is None:
        return "— (⊥)"
    return f"±{num(f.low)}" if f.low == f.high else f"±{num(f.low)} to ±{num(f.high)}"


def table_suggestion(a: Assumptions) -> None:
    """The smallest ε at which a table of all d coefficients is forecast informative (a suggestion, not a promise),
    searched only when asked for (a bisection of forecasts, about a second)."""
    box = opened("Which ε, and how many coefficients, make a table informative?", "planner_table",
                 icon=":material/table_chart:")
    if box is None:
        return
    with box:
        table_epsilon_words(a)


def table_epsilon_words(a: Assumptions) -> None:
    k = cached_table_rows(dataclasses.astuple(a), a)
    if k is None:
        st.caption("These assumptions give a coefficient no public plausible range (the robust loss without a "
                   "response bound), so no forecast can say when a row informs anyone: read the table's half-width "
                   "above against what you need.")
        return
    at = f"At ε = {num(a.epsilon)} and n = {a.n:,}"
    st.caption(f"{at}, no table is forecast informative, not even of one coefficient." if k == 0 else
               f"{at}, a table of all {a.d} coefficients is forecast informative." if k == a.d else
               f"{at}, a table of up to {k} of the {a.d} coefficients (intervals together) is forecast informative: "
               "which ones is yours to choose, as these assumptions tell no coefficient from another.")
    eps = cached_table_epsilon(dataclasses.astuple(a), a)
    if eps is None:
        st.caption(f"No ε up to {MAX_EPSILON:g} makes a table of all {a.d} coefficients informative at n = {a.n:,} "
                   "by the forecast: more rows, or fewer coefficients, would.")
        return
    st.caption(f"A table of all {a.d} coefficients (intervals together) is forecast informative from about "
               f"ε = {num(eps)} at n = {a.n:,}: every row's interval likely narrower than the coefficient's plausible "
               "range.")


def epsilon_search(a: Assumptions, target: float) -> str | None:
    """The smallest ε as shown; under PLD accounting (a dp_accounting solve per ε tried, seconds each) only once
    asked for, and then again while the assumptions and target are those of the last search asked for."""
    key = (dataclasses.astuple(a), target)
    if a.accounting == "pld" and keys.PLANNER_SEARCHED.get() != key:
        st.caption("Under PLD accounting every ε tried is solved by dp_accounting, about a second each: "
                   "the search for the smallest ε runs on request.")
        if not st.button("Find the smallest ε under PLD accounting", key="planner_search_pld"):
            return None
        keys.PLANNER_SEARCHED.set(key)
    eps = cached_epsilon(key[0], target, a)
    return f"beyond {MAX_EPSILON:g}" if eps is None else num(eps, 4)


def inverse_view(a: Assumptions, target: float) -> None:
    st.markdown(f"#### For a half-width of {num(target)} {PLAN}")
    n = cached_n(dataclasses.astuple(a), target, a)
    items = [(f"Smallest n at ε = {a.epsilon:g}", f"beyond {N_MAX:.0e}" if n is None else f"{n:,}",
              "Bisection over n of the same plan, the assumed eigenvalues held fixed (population values)")]
    eps = epsilon_search(a, target)
    if eps is not None:
        items.insert(0, (f"Smallest total ε at n = {a.n:,}", eps, "Bisection over ε (to 0.1 %) of the same plan: "
                         "the test (14) passes and the half-width meets the target"))
    metric_row(items)


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Planner")
    st.caption(f"{PLAN_NOTE} Open in both modes. The budget, level and model settings are shared with the "
               "Pipeline page; the numbers below use the stated assumptions in place of the data's eigenvalues.")
    with st.expander("Assumptions", expanded=True, icon=":material/tune:"):
        assumption_controls()
        model_controls()
        controls.budget_controls()
    try:
        a = assumptions()
        p = cached_plan(dataclasses.astuple(a), a)
    except PspError as exc:
        st.error(message(exc))
        return
    plan_view(p)
    try:
        target = check_target(st.session_state["planner_target"])
    except PspError as exc:
        st.error(message(exc))
        target = None
    if target is not None:
        inverse_view(a, target)
    chart(half_width_figure(cached_sweep(dataclasses.astuple(a), a), p, target), "planner_figure", restyle=False)
    frontier_section()


@st.cache_data(show_spinner=False)
def cached_frontier(path: str, stamp: float) -> tuple[FrontierPoint, ...]:
    """The frontier file read once per version: `stamp`, its modification time, is part of the key (a name with a
    leading underscore would not be), so a rewritten file is read again."""
    return read_frontier(Path(path))


def frontier_section() -> None:
    """The measured width frontier on census-like data, drawn once opened (core.teaching.frontier)."""
    box = opened("Census data: the ε an informative interval needs (measured)", "planner_frontier",
                 ":material/insights:")
    if box is None:
        return
    path = results_dir() / "frontier.csv"
    with box:
        try:
            points = cached_frontier(str(path), path.stat().st_mtime if path.exists() else 0.0)
        except PspError as exc:
            st.info(message(exc), icon=":material/info:")
            return
        chart(frontier_figure(points, GRID_TOP), "planner_frontier_figure", restyle=False)
        st.caption("Measured on SYNTHETIC census files (made-up records), not on your data: for each state, sample "
                   "size and target (a coefficient, or a 4-row table read at its widest row), the smallest total ε "
                   "at which at least 90 % of releases by the publish default (the centred encoding, split "
                   "1 : 1 : 18, analytic noise, the fallback on, level 95 %) certified the curvature and the median "
                   "released half-width was within twice the non-private 1.96·SE. Below it the interval is valid but "
                   "wider; see docs/experiments.md, “The width frontier”.")


main()
