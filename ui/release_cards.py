"""The Pipeline's release cards: the preview before the release event, stage 4 (the released value, its interval
and the fallback's curvature bound), the budget and the run's one-line summary, and a regression table.

Like the stage cards (ui.cards) they lay out core results; in publish mode they are handed only the run's public
view, so a card that reached for a non-private number would fail rather than show it.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from core.mechanisms.pipeline import PrivateRun, Problem
from core.mechanisms.release import Release
from core.mechanisms.split import FallbackBudget
from core.privacy.accounting import Budget, basic_shares
from core.report import together
from core.teaching.diagnosis import MOSTLY_PROJECTED, bottom_advice
from ui import cache, loaded, session
from ui.cards import card_title, details, fields, formulas
from ui.charts import chart, sketch
from ui.figures import profile_figure
from ui.format import interval, label, markdown_table, metric_row, noise_source, num, opened, presenting, tagged
from ui.formulas import (
    ACCOUNTING_NAMES,
    BUDGET_STAGES,
    COMPOSITION_FORMULAS,
    DELTA_BASIC,
    EPSILON_BASIC,
    INTERVAL_LABEL,
    INTERVAL_LABELS,
    INTERVAL_MEANING,
    INTERVAL_MEANINGS,
    ORACLE_INTERVAL,
    POPULATION_LABEL,
    POPULATION_MEANING,
    PRIVATE_INTERVAL,
    RELEASE,
    RELEASE_FORMULAS,
    budget_row,
)
from ui.svg import density_figure, forest_figure, release_line

# ---------------------------------------------------------------- stage 4


def preview_card(seen: dict, level: float, rest: tuple[float, float]) -> None:
    """What the waiting certificates say the release will give (core.plan.preview: private values only)."""
    lmax = seen["lambda_max"]
    with st.container(border=True):
        card_title("Certified, not yet released")
        metric_row([
            ("λ̂min", num(seen["lambda_min"]), "The certified lower bound of stage 1 (private)"),
            ("λ̂max", "—" if lmax is None else num(lmax), "The certified upper bound of stage 2 (private)"),
            ("Test (14)", "passed" if seen["test"]["passed"] else "failed", seen["test"]["reason"]),
        ])
        then = {
            "released": f"The test passed: Algorithm 5 will release with a {level:.0%} interval of half-width "
                        f"{num(seen['half_width'])}, known now since it depends on these certificates only.",
            "fallback": "The test failed, so the fallback, objective perturbation, will release on the budget "
                        "Algorithm 5 has not spent, with an interval whose width comes from a private estimate of "
                        "the curvature at the released point.",
            "bottom": "The test failed and the fallback is off: the release would be ⊥. Stop here to spend nothing "
                      "more.",
        }[seen["branch"]]
        st.markdown(f"{then} Releasing spends the rest, ε = {rest[0]:.3g}, δ = {rest[1]:.3g}; stopping here spends "
                    "nothing more. The privacy ledger keeps these certificates for this release only, after a reload "
                    "or a restart too, until they release once or the data's curator closes them.")
        forecast_notice(seen.get("forecast"), level)


def table_preview_card(seen: dict, rest: tuple[float, float] | None) -> None:
    """What a table's waiting certificates say its release will give, row by row (core.plan.preview: private values
    only). Every row has the same forecast: nothing private tells the rows apart before the release."""
    f = seen["forecast"]
    with st.container(border=True):
        card_title("Table certified, not yet released")
        metric_row([
            ("λ̂min", num(seen["lambda_min"]), "The certified lower bound of stage 1 (private)"),
            ("Test (14)", "passed" if seen["test"]["passed"] else "failed", seen["test"]["reason"]),
            ("Each row's level", f"{seen['row_level']:.3g}",
             "All rows at once at the level chosen (each at this level)" if seen["coverage"] == "together" else
             "Each row on its own at the level chosen"),
        ])
        likely = "—" if f["low"] is None else (f"±{num(f['low'])}" if f["low"] == f["high"]
                                               else f"±{num(f['low'])} to ±{num(f['high'])}")
        rows = pd.DataFrame({"Coefficient": seen["rows"], "Likely half-width": [likely] * len(seen["rows"])})
        st.markdown(markdown_table(rows))
        if f["low"] is not None:
            st.caption(f"The widest row's half-width will likely be at most ±{num(f['high'])}; {f['how']}.")
        if rest is not None:
            st.markdown(f"Releasing spends the rest, ε = {rest[0]:.3g}, δ = {rest[1]:.3g}; stopping here spends "
                        "nothing more. The privacy ledger keeps these certificates for this table only.")
        if f["uninformative"]:
            st.warning(f"{too_wide_words(f)}: up to ±{num(f['high'])}, wider than the coefficients' plausible range "
                       f"(±{num(f['plausible'])}). {f['advice']}", icon=":material/warning:")


def forecast_notice(f: dict | None, level: float) -> None:
    """The forecast of the release's interval (core.mechanisms.forecast), and a warning before an interval too wide to
    inform anyone is paid for."""
    if f is None or f["low"] is None:
        return
    likely = f"±{num(f['low'])}" if f["low"] == f["high"] else f"between ±{num(f['low'])} and ±{num(f['high'])}"
    st.caption(f"Forecast: the {level:.0%} interval's half-width will likely be {likely}; {f['how']}.")
    if f["uninformative"]:
        st.warning(f"{too_wide_words(f)}: up to ±{num(f['high'])}, wider than the coefficient's plausible range "
                   f"(±{num(f['plausible'])}). {f['advice']}", icon=":material/warning:")


def too_wide_words(f: dict) -> str:
    """The forecast's warning, with the chance of an uninformative interval where it is known."""
    if f.get("informative") is None:
        return "This release may give an interval too wide to inform anyone"
    chance = 1.0 - f["informative"]
    if chance >= 0.995:
        return "This release will almost surely give an interval too wide to inform anyone"
    return f"This release gives an interval too wide to inform anyone with probability about {chance:.0%}"


def curvature_caption(r: Release) -> str:
    """The fallback's budget and its private curvature at the released point, in one line (private values only)."""
    c = r.fallback_curvature
    spent = f"The fallback spent ε = {r.fallback_epsilon:.3g}, all the run had left"
    chosen = ("" if r.fallback_probe is None else
              f" (a private reading of the data's curvature, ε = {r.fallback_probe.epsilon:.2g}, chose that share)")
    if c is None or c.bound is None:
        return f"{spent}; no curvature could be certified at the released point, so the interval is the wide one."
    return (f"{spent}, {c.epsilon:.2g} of it on the curvature at the released point{chosen}: certified λmin ≥ "
            f"{c.lambda_hat:.3g} there, and ‖H⁻¹u‖ (H the objective's Hessian there) about "
            f"{math.exp(c.log_norm):.3g} (≤ {c.bound:.3g} with probability 1 − {c.beta:.2g}), which with its noise "
            "sets the interval's width.")


def release_card(run: PrivateRun, name: str, problem: Problem | None) -> None:
    """Stage 4; problem is None in publish mode, where only the value and its private interval are shown."""
    r = run.release
    level = f"{r.interval_level:.0%}"  # every interval released is proven (docs/privacy.md)
    released, fell_back = r.status == "released", r.status == "fallback"
    with st.container(border=True):
        card_title(RELEASE.heading(f" of `{name}`"))
        if fell_back:
            st.info(f"Released by objective perturbation (15), the fallback, because {r.reason}. {r.interval_note}",
                    icon=":material/alt_route:")
            st.caption(curvature_caption(r))
        elif not released:
            st.warning(f"⊥ (nothing released): {r.reason}. {bottom_advice(loaded.loss_name())}",
                       icon=":material/block:")
        shown = [
            (label(r, "status", "Status"), "released" if released else "fallback" if fell_back else "⊥",
             "Whether a value was released: by Algorithm 5, by the fallback (objective perturbation) when the "
             "test (14) fails, or nothing (⊥)"),
            (label(r, "value", "Released value T"), num(r.value),
             "The private estimate of the coefficient: the fitted value plus Gaussian noise, uᵀθ(Pₙ) + σ ω Z"),
            (label(r, "interval", f"{level} {INTERVAL_LABELS.get(r.interval_target, INTERVAL_LABEL)}"),
             interval(r.interval), f"{INTERVAL_MEANINGS.get(r.interval_target, INTERVAL_MEANING)} Formula: "
             f"{PRIVATE_INTERVAL}"),
        ]
        if r.population is not None:
            shown.append((label(r, "population", f"{level} {POPULATION_LABEL}"), interval(r.population.interval),
                          f"{POPULATION_MEANING} It is {r.population.note}."))
        if problem is None:
            metric_row(shown)
            if released:
                sketch("release_line", release_line, r)
        else:
            metric_row(shown + [(label(r, "oracle_interval", f"{level} oracle interval"), interval(r.oracle_interval),
                                 ORACLE_INTERVAL)])
            details("How the noise was scaled, and the draw", "release_details", fields(r, [
                ("sigma", "σ(ε_c, δ_c)",
                 f"The noise multiplier the release's budget allows: σ(ε_c, δ_c) of (7), {r.calibration} calibration"),
                ("w_bar", "w̄",
                 "A private upper bound on the local modulus ω, which sets the interval's width: 2G₀/(n λ₀ (1 − γ))"),
                ("omega", "ω(u | Pₙ)",
                 "How much one row can move the coefficient at these data (the local modulus (11)); scales the noise"),
                ("Delta", "Δ(Pₙ, u)",
                 "How much one row moves the coefficient, to first order: the directional sensitivity (3b)"),
                ("u_theta", "uᵀθ(Pₙ)", "The coefficient fitted on these rows, without privacy"),
                ("z", "Gaussian draw Z", "The standard normal draw that makes the release private, N(0, 1)"),
            ]))
            if released:
                sketch("release_density", density_figure, r)
            formulas(RELEASE_FORMULAS)
        if released or fell_back:
            st.caption(INTERVAL_MEANINGS[r.interval_target])


# ---------------------------------------------------------------- the budget and the summary


def guarantee(b: Budget) -> str:
    """What the page's published values promise together, in words."""
    how = ACCOUNTING_NAMES["pld" if b.accounting == "pld" else "basic"]
    factor = math.exp(b.epsilon_total)
    factor_text = f"{factor:.3g}" if factor < 1e3 else f"{factor:,.0f}"
    return (
        f"**Guarantee.** Everything this page publishes — λ̂_min, λ̂_max, the test's outcome and the released value "
        f"with its interval — is together (ε, δ)-differentially private with ε = {b.epsilon_total:g} and "
        f"δ = {b.delta_total:g}, by {how}: changing one person's record changes the probability of any outcome "
        f"by at most a factor e^{b.epsilon_total:g} ≈ {factor_text}, except with probability {b.delta_total:g}."
    )


def budget_table(b: Budget, reached_stage2: bool) -> pd.DataFrame:
    """Each stage's (ε, δ) and what it counts towards the basic totals (core.privacy.accounting.basic_shares): the
    counted columns add up to the totals shown below the table."""
    stages = [getattr(b, s.key) for s in BUDGET_STAGES]
    counted = basic_shares(*stages)
    return pd.DataFrame({
        "stage": [budget_row(s, reached_stage2) for s in BUDGET_STAGES],
        "weight": b.split,
        "ε of the stage": [s.epsilon for s in stages],
        "δ of the stage": [s.delta for s in stages],
        "ε counted": [e for e, _ in counted],
        "δ counted": [d for _, d in counted],
    })


def fallback_spent(r: Release, reached_stage2: bool) -> str:
    """What the fallback ran on the budget the table's Algorithm 5 rows did not spend (core.mechanisms.split)."""
    split = FallbackBudget(r.fallback_epsilon, r.fallback_delta, r.fallback_shares, 0.0)  # the ridge shares nothing
    (op_e, op_d), (cv_e, cv_d) = split.op, split.curvature
    rows = "stage 4's row" if reached_stage2 else "stage 4's row and of stage 2's (not reached)"
    probe = "" if r.fallback_probe is None else (
        f", less a private reading of the curvature drawn with the certificates (ε = {num(r.fallback_probe.epsilon)})")
    return (f"The test (14) failed, so Algorithm 5's Gaussian release did not run: the budget of {rows} went to the "
            f"fallback{probe}, (ε, δ) = ({num(r.fallback_epsilon)}, {num(r.fallback_delta)}), of which objective "
            f"perturbation (15) spent ({num(op_e)}, {num(op_d)}) and the curvature at the released point "
            f"({num(cv_e)}, {num(cv_d)}). The totals below are unchanged.")


BUDGET_FORMATS = {"weight": "%.4f", "ε of the stage": "%.6g", "δ of the stage": "%.4e", "ε counted": "%.6g",
                  "δ counted": "%.4e"}


def budget_card(b: Budget, reached_stage2: bool, r: Release | None = None) -> None:
    """Each stage's (ε, δ) and the totals they compose to; for a release r that fell back, what the fallback ran and
    spent in their place."""
    with st.container(border=True):
        card_title(f"Budget · {b.accounting} accounting")
        st.markdown(guarantee(b))
        table = budget_table(b, reached_stage2)
        shown = {c: num if presenting() else BUDGET_FORMATS[c].__mod__ for c in BUDGET_FORMATS}
        st.markdown(markdown_table(pd.DataFrame({column: table[column].map(shown[column]) if column in shown
                                                 else table[column] for column in table})))
        if r is not None and r.status == "fallback" and r.fallback_shares is not None:
            st.info(fallback_spent(r, reached_stage2), icon=":material/alt_route:")
        st.caption("“Counted” is what each stage adds to the basic-composition totals (the release costs 2ε_c and "
                   "(1 + e^ε_c)δ_c; the certificates' δ grow by e^(ε_a+ε_b)), so those columns add up to the "
                   "basic-composition totals below.")
        totals = [
            ("ε total (basic composition)", num(b.epsilon_basic), EPSILON_BASIC),
            ("δ total (basic composition)", num(b.delta_basic), DELTA_BASIC),
        ]
        # Under PLD accounting the split already computed the PLD total. Under basic accounting it costs 0.05 s to
        # 1 s per new ε and rarely differs from the basic total, so it waits to be asked for.
        if b.accounting == "pld" or st.toggle(
            "Show the PLD total", key="pld_total",
            help="ε of these stages at the total δ by privacy-loss distributions (dp_accounting, docs/privacy.md). "
            "A Laplace count's privacy loss sits at ±ε half the time, so it is rarely below the basic total.",
        ):
            totals.append((f"ε total (PLD at δ = {b.delta_total:g})", num(b.epsilon_pld),
                           "Privacy-loss distributions (docs/privacy.md)"))
        metric_row(totals)
        profile(b)
        formulas(COMPOSITION_FORMULAS)


@session.fragment
def profile(b: Budget) -> None:
    """The release's δ(ε) privacy profile (core.privacy.accounting.privacy_profile: basic and PLD), drawn once opened:
    the PLD takes up to a second per budget. Public parameters only."""
    if presenting():
        return
    box = opened("Privacy profile δ(ε)", "privacy_profile", ":material/show_chart:")
    if box is None:
        return
    with box:
        chart(profile_figure(cache.privacy_profile(b)), "privacy_profile_chart", 360)
        st.caption("Every point of a curve is a guarantee of this same release: it is (ε, δ(ε))-differentially "
                   "private for every ε. The star is the chosen (ε, δ).")


def projection_note(problem: Problem) -> None:
    """Teaching only: when most rows were projected onto the domain, the released value is about projected data."""
    share = problem.clipped_rows / problem.n
    if share > MOSTLY_PROJECTED:
        st.warning(tagged(f"{share:.0%} of the rows lay outside the covariate domain and were projected onto it: "
                          "whatever is released is the coefficient of the projected data. Rescale the features "
                          "to [−1, 1] (the Data page says how)."), icon=":material/crop:")


def summary(run: PrivateRun, name: str, seed: int | None) -> None:
    """One line above the cards: the released value and interval, or ⊥ and why, and where the noise came from."""
    r = run.release
    noise = noise_source(seed, "noise from OS entropy, drawn anew only by “Draw fresh noise” or a private setting")
    if r.status in ("released", "fallback"):
        how = "" if r.status == "released" else " by objective perturbation (the test (14) failed)"
        st.markdown(f"**Released**{how} `{name}`: T = **{num(r.value)}**, {r.interval_level:.0%} "
                    f"{INTERVAL_LABELS[r.interval_target]} {interval(r.interval)} · {noise}")
    else:
        st.markdown(f"**⊥ — nothing released** for `{name}`: {r.reason} · {noise}")


# ---------------------------------------------------------------- a regression table


def table_view(doc: dict, key: str, fitted: dict[str, float] | None = None) -> None:
    """A regression table's document (core.report.table_document): its rows and the forest plot; in teaching views
    the fit's values beside them (`fitted`, not private). The Pipeline and the Report both show a table this way."""
    t = doc["table"]
    if t["status"] == "bottom":
        st.warning(f"Nothing was released (⊥): {t['reason']}. Choose “fall back to objective perturbation” under "
                   "“When the stability test (14) fails” above, or release the table at a larger ε or n.",
                   icon=":material/block:")
        return
    rows = pd.DataFrame([dict(coefficient=r["name"], value=r["value"], low=r["low"], high=r["high"],
                              **{"±": r["half_width"]}) for r in t["rows"]])
    if fitted is not None:
        rows["θ(Pₙ) · not private"] = [fitted[r["name"]] for r in t["rows"]]
    g = doc["guarantee"]
    how = ("the Gaussian step on the whole vector (the test (14) passed)" if t["status"] == "released" else
           "objective perturbation (the test (14) failed), each row's width from a private curvature bound")
    st.caption(f"One release of {len(t['rows'])} coefficients at ε = {g['epsilon']:g}, δ = {g['delta']:g} for the "
               f"whole table, by {how}. {t['interval_note']}")
    shown = num if presenting() else "{:.4g}".format
    st.table(rows.style.format({c: shown for c in rows.columns[1:]}).hide(axis="index"))  # prints every row
    sketch(f"{key}_forest", forest_figure, t["rows"], t["level"], fitted, together(t))
