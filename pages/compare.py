"""Compare page: the chosen coefficient under every method, K noise draws each, at one total (ε, δ).

Errors are measured against u^T θ(P_n), which is not private, so the page works in teaching mode
only. A comparison is expensive: it runs on the button, and its result stays in the session until a
setting it depends on changes (then it is dropped, never shown against settings it did not use).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core.accounting import Budget
from core.compare import EXTRA_METHODS, FULL_VECTOR_METHODS, METHODS, Comparison, MethodTrials, compare
from core.errors import InputError
from core.pipeline import Problem, make_rng
from ui import state
from ui.boot import through_navigation
from ui.controls import budget as budget_setting
from ui.figures import strip_figure
from ui.format import noise_source, tagged
from ui.theme import METHOD_LABELS, NOT_PRIVATE

through_navigation()  # a deep link's first run on a fresh server goes through app.py

MAX_TRIALS = 500


# ---------------------------------------------------------------- settings


def direction(problem: Problem) -> tuple[int | np.ndarray, str]:
    """u and how to name it, as the Pipeline page releases it."""
    u, name = state.target(problem)
    if isinstance(u, int):
        return u, f"coordinate `{name}`"
    return u, f"u ∝ ({', '.join(f'{w:g}' for w in u)})"


def settings(methods: list[str]) -> tuple:
    """Everything a comparison depends on: a stored result is shown only while these are unchanged."""
    keys = ("epsilon", "delta", "accounting", "calibration", "coordinate", "direction", "trials", "noise_seed")
    return (state.data_spec(), state.model_spec(), state.split(), tuple(methods), *(state.get(k) for k in keys))


def controls() -> list[str]:
    options = METHODS + EXTRA_METHODS + FULL_VECTOR_METHODS
    methods = st.multiselect(
        "Methods", options, default=list(METHODS), format_func=METHOD_LABELS.get, key="compare_methods",
        persist_state="session",
        help="The five methods of the paper's section 4 by default; Algorithms 3 and 7 release the whole vector "
        "and are scored by their ℓ₂ error instead.",
    )
    # A link may carry any integer: bring it inside the widget's range rather than fail.
    st.session_state["trials"] = min(max(int(state.get("trials")), 1), MAX_TRIALS)
    st.number_input(
        "Noise draws per method (K)", min_value=1, max_value=MAX_TRIALS, step=1, key="trials",
        help="Each method runs K times on the same data with fresh noise; the fit is reused.",
    )
    return methods


# ---------------------------------------------------------------- running


def run(problem: Problem, u: int | np.ndarray, budget: Budget, methods: list[str]) -> Comparison:
    bar = st.progress(0.0, text="Running the comparison…")
    try:
        return compare(
            problem, u, budget, state.get("trials"), make_rng(state.get("noise_seed")), methods,
            state.dataset().theta_star, state.get("calibration"),
            progress=lambda done: bar.progress(done, text=f"Running the comparison… {done:.0%}"),
        )
    finally:
        bar.empty()


# ---------------------------------------------------------------- results


def rmse(errors: list[float | None]) -> float:
    done = np.array([e for e in errors if e is not None], dtype=float)
    return float(np.sqrt(np.mean(done**2))) if done.size else math.nan


def median_abs(errors: list[float | None]) -> float:
    done = np.array([e for e in errors if e is not None], dtype=float)
    return float(np.median(np.abs(done))) if done.size else math.nan


def released(m: MethodTrials) -> str:
    return f"{sum(v is not None for v in m.values)} of {len(m.values)}"


def error_table(c: Comparison) -> pd.DataFrame:
    rows = []
    for name, m in c.methods.items():
        vs_fit = m.errors(c.u_theta)
        row = {"method": METHOD_LABELS[name], "private": m.private, "released": released(m),
               "RMSE vs uᵀθ(Pₙ)": rmse(vs_fit), "median |error| vs uᵀθ(Pₙ)": median_abs(vs_fit)}
        if c.u_theta_star is not None:
            row["RMSE vs uᵀθ*"] = rmse(m.errors(c.u_theta_star))
            row["median |error| vs uᵀθ*"] = median_abs(m.errors(c.u_theta_star))
        row.update({"noise scale": m.noise_scale, "median time (ms)": 1e3 * float(np.median(m.seconds)),
                    "ε": m.epsilon, "δ": m.delta})
        rows.append(row)
    return pd.DataFrame(rows)


def vector_table(c: Comparison) -> pd.DataFrame:
    return pd.DataFrame([
        {"method": METHOD_LABELS[name], "private": m.private, "released": released(m),
         "RMSE of ‖θ̂ − θ(Pₙ)‖₂": rmse(list(m.values)), "median ‖θ̂ − θ(Pₙ)‖₂": median_abs(list(m.values)),
         "noise scale": m.noise_scale, "median time (ms)": 1e3 * float(np.median(m.seconds))}
        for name, m in c.full_vector.items()
    ])


def results(c: Comparison) -> None:
    if c.methods:
        st.markdown(tagged("#### Released values"))
        st.caption("Each point is one draw; the dashed line is the non-private estimate every method aims at.")
        st.plotly_chart(strip_figure(c), key="compare_strip")
        table = error_table(c)
        st.markdown(tagged("#### Errors"))
        st.caption(
            "Teaching material: every error is measured against values computed from the data without privacy. "
            "Noise scale is each method's own: σ·ω for Algorithm 5, σ·Δ for the oracle, the noise multiplier for "
            "DP-SGD."
        )
        st.dataframe(table, hide_index=True, key="compare_table", column_config=number_formats(table))
        st.download_button("Download the table (CSV)", table.to_csv(index=False), file_name="comparison.csv",
                           mime="text/csv", on_click="ignore", key="compare_csv")
    if c.full_vector:
        table = vector_table(c)
        st.markdown(tagged("#### Whole vector"))
        st.dataframe(table, hide_index=True, key="compare_vector_table", column_config=number_formats(table))


def number_formats(table: pd.DataFrame) -> dict:
    formats = {c: st.column_config.NumberColumn(format="%.4g") for c in table.columns[3:]}
    formats["private"] = st.column_config.CheckboxColumn(help="Unticked: NOT private, a reference only")
    return formats


# ---------------------------------------------------------------- page


def main() -> None:
    state.ensure()  # a direct link can run this page before app.py has run
    st.title("Compare methods")
    if state.is_publish():
        st.info(
            "Comparisons need the true value uᵀθ(Pₙ), which is not private: they are available in teaching mode only.",
            icon=":material/school:",
        )
        return
    methods = controls()
    try:
        problem = state.problem()
        u, name = direction(problem)
        budget = budget_setting()
    except InputError as exc:
        st.error(str(exc))
        return
    noise = noise_source(state.get("noise_seed"))
    st.caption(
        f"The target is {name}. Every method spends the same total (ε, δ) = ({budget.epsilon_total:g}, "
        f"{budget.delta_total:g}) ({budget.accounting} accounting, {state.get('calibration')} calibration), "
        f"{noise}. The oracle {NOT_PRIVATE} adds noise scaled to the local sensitivity: a yardstick, not a mechanism."
    )
    key = settings(methods)
    if st.button("Run comparison", type="primary", key="run_comparison", disabled=not methods):
        try:
            state.keep_comparison(key, run(problem, u, budget, methods))
        except InputError as exc:
            st.error(str(exc))
            return
    stored = state.comparison(key)
    if stored is None:
        st.caption("Press **Run comparison**: it runs every chosen method K times, which can take a while.")
        return
    results(stored)


main()
