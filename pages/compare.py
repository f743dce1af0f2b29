"""Compare page: the chosen coefficient under every method, K noise draws each, at one total (ε, δ).

Errors are measured against u^T θ(P_n), which is not private, so the page works in teaching mode
only. Beside them, each method's release rate, the coverage of its intervals (of u^T θ(P_n), and of
u^T θ* on synthetic data; not private) and their median half-width (core.methods.compare.summarise). The
chosen methods live in the URL (methods=local,oracle; ui.params). A comparison is expensive: it runs
on the button, and its result stays in the session until a setting it depends on changes (then it
is dropped, never shown against settings it did not use).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from core.errors import PspError
from core.mechanisms.pipeline import Problem, make_rng
from core.methods.compare import (
    EXTRA_METHODS,
    FULL_VECTOR_METHODS,
    METHODS,
    RATE_CONFIDENCE,
    Comparison,
    MethodSummary,
    MethodTrials,
    Rate,
    compare,
    summaries,
)
from core.privacy.accounting import Budget
from ui import keys, loaded, params, release, session
from ui.boot import through_navigation
from ui.charts import chart
from ui.controls import budget as budget_setting
from ui.figures import strip_figure
from ui.format import data_table, fixed, noise_source, percent, tagged
from ui.labels import message
from ui.theme import METHOD_LABELS, NOT_PRIVATE

through_navigation()  # a deep link's first run on a fresh server goes through app.py

MAX_TRIALS = int(params.PARAMS["trials"].bounds[1])  # core.settings: the command line's limit too


# ---------------------------------------------------------------- settings


def direction(problem: Problem) -> tuple[int | np.ndarray, str]:
    """u and how to name it, as the Pipeline page releases it."""
    u, name = release.target(problem)
    if isinstance(u, int):
        return u, f"coordinate `{name}`"
    return u, f"u ∝ ({', '.join(f'{w:g}' for w in u)})"


def controls() -> list[str]:
    options = METHODS + EXTRA_METHODS + FULL_VECTOR_METHODS
    methods = st.multiselect(
        "Methods", options, format_func=METHOD_LABELS.get, key="methods",
        help="The five methods of the paper's section 4 by default; Algorithms 3 and 7 release the whole vector "
        "and are scored by their ℓ₂ error instead. Kept in the link (methods=local,oracle).",
    )
    # A link may carry any integer: bring it inside the widget's range rather than fail.
    st.session_state["trials"] = min(max(int(params.get("trials")), 1), MAX_TRIALS)
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
            problem, u, budget, params.get("trials"), make_rng(params.get("noise_seed")), methods,
            loaded.dataset().theta_star, params.get("calibration"),
            progress=lambda done: bar.progress(done, text=f"Running the comparison… {done:.0%}"),
            level=params.get("level"),
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


# Column names: those computed against the fit say so in their names (a table header shows no badge).
COVERAGE_FIT, COVERAGE_STAR = "coverage of uᵀθ(Pₙ) · not private", "coverage of uᵀθ* · not private"
RELEASE_RATE, BY_FALLBACK, HALF_WIDTH = "release rate", "by fallback", "median half-width"


def share(r: Rate | None, missing: str) -> str:
    """A rate as "k/n = p % [low, high]" (its Clopper–Pearson interval), or `missing` when there is none."""
    if r is None:
        return missing
    return f"{r.k}/{r.n} = {percent(r.share, sep=' ')} [{fixed(100 * r.low, 1)}, {fixed(100 * r.high, 1)}]"


def coverage(s: MethodSummary, r: Rate | None) -> str:
    """A coverage cell: never 0 % for a method that states no interval or released nothing."""
    return share(r, "no interval" if not s.has_interval else "nothing released")


def summary_columns(s: MethodSummary, synthetic: bool, fallback: bool) -> dict:
    row = {RELEASE_RATE: share(s.released, "no draws")}
    if fallback:
        row[BY_FALLBACK] = share(s.fallback, "no fallback")
    row[COVERAGE_FIT] = coverage(s, s.coverage_fit)
    if synthetic:
        row[COVERAGE_STAR] = coverage(s, s.coverage_star)
    row[HALF_WIDTH] = math.nan if s.median_half_width is None else s.median_half_width
    return row


def error_table(c: Comparison) -> pd.DataFrame:
    rows, summary = [], summaries(c)
    synthetic, fallback = c.u_theta_star is not None, any(s.fallback is not None for s in summary.values())
    for name, m in c.methods.items():
        vs_fit = m.errors(c.u_theta)
        row = {"method": METHOD_LABELS[name], "private": m.private, "released": released(m),
               **summary_columns(summary[name], synthetic, fallback),
               "RMSE vs uᵀθ(Pₙ)": rmse(vs_fit), "median |error| vs uᵀθ(Pₙ)": median_abs(vs_fit)}
        if synthetic:
            row["RMSE vs uᵀθ*"] = rmse(m.errors(c.u_theta_star))
            row["median |error| vs uᵀθ*"] = median_abs(m.errors(c.u_theta_star))
        row.update({"noise scale": m.noise_scale, "median time (ms)": 1e3 * float(np.median(m.seconds)),
                    "ε": m.epsilon, "δ": m.delta})
        rows.append(row)
    return pd.DataFrame(rows)


def vector_table(c: Comparison) -> pd.DataFrame:
    summary = summaries(c)
    return pd.DataFrame([
        {"method": METHOD_LABELS[name], "private": m.private, "released": released(m),
         RELEASE_RATE: share(summary[name].released, "no draws"),
         "RMSE of ‖θ̂ − θ(Pₙ)‖₂": rmse(list(m.values)), "median ‖θ̂ − θ(Pₙ)‖₂": median_abs(list(m.values)),
         "noise scale": m.noise_scale, "median time (ms)": 1e3 * float(np.median(m.seconds))}
        for name, m in c.full_vector.items()
    ])


def rates_caption(c: Comparison) -> str:
    """What each rate in the table means, and the interval beside it."""
    level = f"{c.level:g}"
    star = (" Coverage of uᵀθ* counts the same intervals against the parameter θ* the synthetic data were "
            "drawn from, which they do not promise to hold.") if c.u_theta_star is not None else ""
    return (
        f"**Release rate**: the share of the K draws that released a value rather than ⊥ (a fallback's value "
        f"counts as released; *by fallback* is the share the fallback released). **Coverage of uᵀθ(Pₙ)** "
        f"{NOT_PRIVATE}: the share of released draws whose level-{level} interval (the Pipeline page's level) "
        f"holds the sample's coefficient uᵀθ(Pₙ), the value the private intervals are for: Algorithm 5 promises "
        f"at least "
        f"{level}·(1 − δ_a), the oracle exactly {level}; the fallback's interval is for the regularised fit's "
        f"coefficient instead.{star} Methods that state no interval say so. Each rate is k/n with, in brackets, "
        f"its {RATE_CONFIDENCE:.0%} Clopper–Pearson interval over these K draws. **Median half-width**: over the "
        "released draws; None without an interval or a release. The release rates and half-widths of private "
        "methods are post-processing of their K releases; the coverages are measured against values not private."
    )


def results(c: Comparison) -> None:
    if c.methods:
        st.markdown(tagged("#### Released values"))
        st.caption("Each point is one draw; the dashed line is the non-private estimate every method aims at.")
        chart(strip_figure(c), "compare_strip", restyle=False)
        table = error_table(c)
        st.markdown(tagged("#### Release, coverage and errors"))
        st.caption(
            "Teaching material: every error is measured against values computed from the data without privacy. "
            "Noise scale is each method's own: σ·ω for Algorithm 5, σ·Δ for the oracle, the noise multiplier for "
            "DP-SGD."
        )
        st.caption(rates_caption(c))
        data_table(table, hide_index=True, key="compare_table", column_config=number_formats(table))
        st.download_button("Download the table (CSV)", table.to_csv(index=False), file_name="comparison.csv",
                           mime="text/csv", on_click="ignore", key="compare_csv")
    if c.full_vector:
        table = vector_table(c)
        st.markdown(tagged("#### Whole vector"))
        data_table(table, hide_index=True, key="compare_vector_table", column_config=number_formats(table))


def number_formats(table: pd.DataFrame) -> dict:
    formats = {c: st.column_config.NumberColumn(format="%.4g") for c in table.columns
               if c != "private" and pd.api.types.is_numeric_dtype(table[c])}
    formats["method"] = st.column_config.TextColumn(pinned=True)  # stays in view while the wide table scrolls
    formats["private"] = st.column_config.CheckboxColumn(help="Unticked: NOT private, a reference only")
    for name in (COVERAGE_FIT, COVERAGE_STAR):
        formats[name] = st.column_config.TextColumn(help="NOT private: measured against a value computed from the "
                                                    "data without privacy (or θ*), for teaching only")
    return formats


# ---------------------------------------------------------------- page


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Compare methods")
    if params.is_publish():
        st.info(
            "Comparisons need the true value uᵀθ(Pₙ), which is not private: they are available in teaching mode only.",
            icon=":material/school:",
        )
        return
    methods = controls()
    try:
        problem = loaded.problem()
        problem.require_memory()
        u, name = direction(problem)
        budget = budget_setting()
    except PspError as exc:
        st.error(message(exc))
        return
    noise = noise_source(params.get("noise_seed"))
    st.caption(
        f"The target is {name}. Every method spends the same total (ε, δ) = ({budget.epsilon_total:g}, "
        f"{budget.delta_total:g}) ({budget.accounting} accounting, {params.get('calibration')} calibration), "
        f"{noise}. The oracle {NOT_PRIVATE} adds noise scaled to the local sensitivity: a yardstick, not a mechanism."
    )
    plan, chosen, trials = release.plan(problem, budget, params.get("noise_seed")), tuple(methods), params.get("trials")
    if st.button("Run comparison", type="primary", key="run_comparison", disabled=not methods):
        try:
            keys.COMPARISON.set(keys.ComparisonRecord(plan, chosen, trials, run(problem, u, budget, methods)))
        except PspError as exc:
            st.error(message(exc))
            return
    stored = keys.comparison(plan, chosen, trials)
    if stored is None:
        st.caption("Press **Run comparison**: it runs every chosen method K times, which can take a while.")
        return
    results(stored)


main()
