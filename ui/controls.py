"""The Pipeline's settings widgets (coefficient, budget, model, noise), and the budget they set.

Every widget's key is a setting of ui.params's registry, so its value is kept across pages and in the URL.
"""

from __future__ import annotations

import secrets

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data.encoding import PAPER_INTERCEPT, RADII_WORDS, asks_paper_intercept
from core.errors import DataError
from core.estimator.geometry import DOMAINS, MAX_RADIUS, MIN_RADIUS
from core.estimator.model import MAX_LAM_REG
from core.estimator.problem import default_coordinate
from core.mechanisms.table import COVERAGES, EACH, TOGETHER
from core.privacy.accounting import ACCOUNTINGS, Budget, make_budget
from core.privacy.gaussian import CALIBRATIONS, delta_warning, epsilon_warning, exp_magnitude
from ui import params, release
from ui.format import certainty_words, opened, sentence
from ui.formulas import BUDGET_STAGES, DELTA_BASIC, EPSILON_BASIC, ORACLE_INTERVAL, PRIVATE_INTERVAL, split_help
from ui.labels import message

# Log grids of the sliders: the R10 preferred numbers for epsilon, 1-2-5 for delta. Epsilon stops at 20: beyond,
# the guarantee means little and the PLD total of the Budget card takes seconds (the what-if explores further).
R10 = (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8)
EPS_GRID = tuple(float(f"{m}e{e}") for e in range(-2, 1) for m in R10) + (10.0, 12.5, 16.0, 20.0)
# The budget's widgets are drawn in the Pipeline's fragment: a value changed in a fragment's rerun is dropped on
# the next page switch unless Streamlit keeps it for the session.
KEEP = "session"
DELTA_GRID = tuple(float(f"{m}e{e}") for e in range(-12, -2) for m in (1, 2, 5)) + (1e-2,)


def budget() -> Budget:
    """The total (ε, δ), split and accounting of the settings, solved into the stages (raises InputError)."""
    return make_budget(params.get("epsilon"), params.get("delta"), params.split(), params.get("accounting"))


def log_options(grid: tuple[float, ...], current: float) -> list[float]:
    """The grid with the current value added, so a value from a link stays selectable."""
    return sorted(set(grid) | {current})


def fresh_noise() -> None:
    """A new draw: with a seed set, a new random seed (so it can still be replayed); without, the kept draw is
    dropped. Nothing else draws noise anew in teaching mode but a change of a private setting."""
    if st.session_state.get("noise_seed") is not None:
        st.session_state["noise_seed"] = secrets.randbelow(1_000_000)
    release.forget_teaching_run()


def coordinate_options(names: tuple[str, ...]) -> tuple[str, ...]:
    """The coordinate's choices; the registry stores the default feature (core.estimator.problem.default_coordinate:
    not the intercept) as "", so a link to it stays short. A coordinate of another data set (or from a link) goes back
    to the default, with a notice, even while the settings panel is folded: a later data set with a feature of that name
    must not pick it up silently."""
    first = default_coordinate(names)
    options = ("", *(name for i, name in enumerate(names) if i != first))
    chosen = params.get("coordinate")
    if chosen not in options:
        st.session_state["coordinate"] = ""
        if chosen != names[first]:  # a link's (or another data set's) coordinate: say so, naming it
            shown = params.shown(chosen)
            moved = DataError(f"in the centred census encoding the intercept is {PAPER_INTERCEPT}.", "encoding")
            centred = " " + message(moved) if asks_paper_intercept(chosen, names) else ""
            st.warning(f"The coordinate “{shown}” is not a feature of these data, so “{names[first]}” is used; "
                       f"choose another under Settings.{centred}", icon=":material/link_off:")
    return options


def target_controls(names: tuple[str, ...], options: tuple[str, ...]) -> None:
    col_j, col_u = st.columns(2)
    col_j.selectbox(
        "Coordinate j", options, key="coordinate", format_func=lambda name: name or names[default_coordinate(names)],
        disabled=bool(params.get("direction").strip()),
        help="u = e_j: Algorithm 5 releases the coefficient u^T θ(P_n) of the estimator (1)",
    )
    col_u.text_input(
        "Custom direction u", key="direction", placeholder=f"{len(names)} comma-separated numbers, e.g. 1, -1, 0, …",
        help="Any u ∈ ℝ^d, normalised to ‖u‖₂ = 1; Algorithm 5 then releases u^T θ(P_n), with Δ(P_n, u) of (3b) "
        "and ω(u | P_n) of (11) for this u. Overrides the coordinate when not empty.",
    )


def budget_controls() -> None:
    col_e, col_d = st.columns(2)
    col_e.select_slider(
        "Total ε (log scale)", log_options(EPS_GRID, params.get("epsilon")), key="epsilon", format_func="{:g}".format,
        persist_state=KEEP,
        help=f"Total ε of Algorithm 5. Basic composition (docs/method.md §9, Lemma 2.5): ε = {EPSILON_BASIC}; "
        "PLD accounting solves the stages so that the privacy-loss-distribution total is ε",
    )
    col_d.select_slider(
        "Total δ (log scale)", log_options(DELTA_GRID, params.get("delta")), key="delta", format_func="{:g}".format,
        persist_state=KEEP,
        help=f"Total δ. Basic composition (docs/method.md §9): δ = {DELTA_BASIC}, with δ_a, δ_b "
        "the certificates' failure probabilities (Proposition 6.1) and δ_c that of σ(ε_c, δ_c) in (7)",
    )
    # In a popover: changed less often than ε and δ, and a new tab then fetches no number box's code (about a dozen
    # front-end files, a cost each new session pays the server).
    with st.popover(split_words(), icon=":material/tune:"):
        cols = st.columns(3)
        for col, stage in zip(cols, BUDGET_STAGES, strict=True):
            weight = stage.share[-1]
            low, high = params.PARAMS["split_a"].bounds
            col.number_input(f"Split {weight}", min_value=low, max_value=high, step=0.5, format="%g",
                             key=f"split{stage.share}", persist_state=KEEP,
                             help=f"Weight {weight} from {low:g} to {high:g}: {split_help(stage)}; δ is split in the "
                             "same proportions (docs/method.md §9)")
        st.radio(
            "Accounting", ACCOUNTINGS, key="accounting", horizontal=True, persist_state=KEEP,
            help="How the total (ε, δ) is split into the stages: basic composition (docs/method.md §9, Lemma 2.5) or "
            "privacy-loss distributions (dp_accounting, docs/privacy.md), which leave each stage a little more",
        )
        st.radio(
            "Noise calibration", CALIBRATIONS, key="calibration", horizontal=True, persist_state=KEEP,
            help="The Gaussian noise of the release and of the fallback's objective perturbation: the paper's "
            "closed forms ((7) and (15), read conservatively: for reproducing its numbers) or exact (analytic: "
            "Balle & Wang 2018 for σ(ε_c, δ_c), docs/privacy.md for (15)), never larger, the default",
        )


def split_words() -> str:
    """The split, the accounting and the calibration in a few words: the label of the popover that sets them."""
    weights = " : ".join(f"{w:g}" for w in params.split())
    return f"Split {weights} · {params.get('accounting')} accounting · {params.get('calibration')} noise"


def model_controls() -> None:
    col_l, col_dom, col_r, col_lev = st.columns(4)
    col_l.number_input(
        "λ_reg", min_value=0.0, max_value=MAX_LAM_REG, step=1e-3, format="%g", key="lam_reg",
        help="λ_reg ≥ 0 of the ridge term (λ_reg/2)‖θ‖² in the estimator (1); changing it refits θ(P_n)",
    )
    domain = col_dom.radio(
        "Covariate domain 𝒳", DOMAINS, key="domain", horizontal=True,
        help="cube [−1, 1]^d (test (14b), d_p = d) or ball ‖x‖₂ ≤ R (test (14a), d_p = 1); "
        "rows outside 𝒳 are projected onto it before the fit (docs/method.md §2)",
    )
    col_r.number_input(  # value=None makes the box clearable: empty = the default radius
        "Ball radius R", value=None, min_value=MIN_RADIUS, max_value=MAX_RADIUS, step=0.5, format="%g", key="radius",
        disabled=domain != "ball",
        placeholder="empty = the data's public bound, else √d",
        help="R = rad₂(𝒳) = r of the ball domain, so G₀ = r·sup|h′| and G₁ = r²·sup h″ (docs/method.md §2). "
        "Empty: the bound the "
        f"data source guarantees (census rows: {RADII_WORDS}), else √d, the ball around the cube",
    )
    low, high = params.PARAMS["response_bound"].bounds
    st.number_input(  # empty = the largest bound the fit certifies for this n and d
        "Response bound |y| ≤ B", value=None, min_value=low, max_value=high,
        format="%g", key="response_bound", placeholder="empty = the largest the fit certifies",
        help="A public bound on the responses of the robust loss: responses beyond ±B are clipped to it before the "
        "fit (and counted), and the fit's certificate rests on it (docs/privacy.md). Logistic labels ignore it.",
    )
    col_lev.slider(
        "Interval level 1 − a", min_value=0.50, max_value=0.99, step=0.01, key="level",
        help=f"Level 1 − a of the intervals {PRIVATE_INTERVAL} (private) and {ORACLE_INTERVAL} (oracle), "
             "docs/method.md §7",
    )
    st.segmented_control(
        "When the stability test (14) fails", ("auto", "on", "off"), key="fallback", required=True,
        format_func={"auto": "fall back for logistic data", "on": "fall back to objective perturbation",
                     "off": "release ⊥ (plain Algorithm 5)"}.get,
        help="Fall back: release by objective perturbation (15) at the release stage's own budget, so the total "
        "guarantee is the same; its interval covers the fitted coefficient where the private curvature proves it, "
        "else the ridge-regularised one. "
        "Off: plain Algorithm 5, which releases nothing (⊥) when the test fails.",
    )


def coverage_control() -> None:
    """The regression table's coverage (core.mechanisms.table.COVERAGES)."""
    st.segmented_control(
        "The table's intervals", COVERAGES, key="coverage", required=True,
        format_func={TOGETHER: "all rows at once", EACH: "each row on its own"}.get,
        help="All rows at once: the intervals cover their coefficients together at the level, each row at 1 − a/k "
        "(wider). Each row on its own: every interval at the level, as regression tables usually print them, so all "
        "k together only at 1 − k·a. Its privacy and its cost are the same.")


def noise_controls() -> None:
    col_s, col_b = st.columns(2, vertical_alignment="bottom")
    seed = params.get("noise_seed")
    # In a popover, as the split (budget_controls). value=None makes the box clearable (empty = OS entropy); the value
    # itself still comes from the session.
    col_s.popover("Noise: from the OS" if seed is None else f"Noise seed {seed}", icon=":material/pin:").number_input(
        "Noise seed (teaching only)", value=None, min_value=0, step=1, key="noise_seed", persist_state=KEEP,
        placeholder="empty = OS entropy",
        help="Seed of the privacy noise: the Lap(1/ε) draws of Algorithms 2 and 4 and Z ~ N(0, 1) of Algorithm 5. "
        "A seeded run replays exactly; empty = noise from the OS, drawn anew by “Draw fresh noise” or a change of "
        "a private setting (never by a display toggle)",
    )
    col_b.button(
        "Draw fresh noise", key="fresh_noise", on_click=fresh_noise, icon=":material/casino:",
        help="Run stages 1–4 (Algorithms 2, 4 and 5) again with new noise; with a seed set, a new random seed",
    )


def controls(names: tuple[str, ...]) -> None:
    """The Settings expander: what to release and the model, whose change refits θ(P_n) and reruns the page.
    Folded, and its widgets drawn only once it is opened (a third of a new tab's server time): the data are
    loaded by now, the budget below is what a user changes most, and the session keeps the settings meanwhile."""
    options = coordinate_options(names)
    box = opened("Settings · coordinate and model", "settings_panel", ":material/tune:")
    if box is not None:
        with box:
            target_controls(names, options)
            model_controls()


def privacy_controls(n: int) -> None:
    """The privacy budget (and, in teaching mode, the noise seed) with what ε and δ mean as risk; drawn inside the
    Pipeline's fragment, so a change reruns only the private stages."""
    with st.container(border=True):
        st.markdown("**Privacy budget**")
        budget_controls()
        risk(n)
        if not params.is_publish():
            noise_controls()


def risk(n: int) -> None:
    """What the chosen (ε, δ) allows an attacker, in words, and a warning when either is weak."""
    eps = params.get("epsilon")
    st.caption(
        f"What this means: an attacker who starts 50 % sure that a given person is in the data can end at most "
        f"{certainty_words(eps)} sure, and any test for one person's presence has true-positive rate "
        f"≤ e^ε × false-positive rate + δ (e^ε ≈ {exp_magnitude(eps)})."
    )
    budget_warnings(st.container(), n)


def budget_warnings(where: DeltaGenerator, n: int | None) -> None:
    """A warning in words for an ε above 5 and, when n is known, a δ not below 1/n (core.privacy.gaussian)."""
    eps, delta = params.get("epsilon"), params.get("delta")
    for warning in (epsilon_warning(eps), None if n is None else delta_warning(delta, n)):
        if warning is not None:
            where.warning(sentence(warning), icon=":material/warning:")
