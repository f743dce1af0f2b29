"""Pipeline page: Algorithm 5 on the loaded data, one card per stage.

The data and the fit (stage 0) come from ui.state, cached on the data and model settings only.
Teaching mode runs the private stages again on every rerun (seeded, or fresh OS noise), charges
nothing, and offers its run only as a snapshot labelled TEACHING — NOT PRIVATE; publish mode runs
them once per click of the release button, charges the ledger, and only such a charged release
reaches the Report. Noise is never cached; the what-ifs, deterministic functions of the data, are
(ui.cache). The cards are in ui.cards, the settings in ui.controls, the snapshot in ui.snapshot.
"""

from __future__ import annotations

import streamlit as st

from core.accounting import Budget
from core.data import Dataset
from core.errors import InputError
from core.pipeline import PrivateRun, Problem, make_rng, run_private
from ui import cards, controls, state
from ui.boot import through_navigation
from ui.snapshot import snapshot_name, teaching_snapshot
from ui.theme import NOT_PRIVATE

through_navigation()  # a deep link's first run on a fresh server goes through app.py


def private_cards(run: PrivateRun, b: Budget, name: str, problem: Problem, publish: bool) -> None:
    """Stages 1-4 and the budget; publish mode shows only released values (and public constants)."""
    shown = None if publish else problem
    cards.lambda_min_card(run, shown)
    cards.lambda_max_card(run, shown)
    cards.test_card(run, b, shown, problem.geometry, problem.n)
    cards.release_card(run, name, shown)
    cards.budget_card(b, run.lambda_max is not None)


def teaching(problem: Problem, data: Dataset) -> None:
    seed = state.get("noise_seed")
    try:
        u, name = state.target(problem)
        b = controls.budget()
        run = run_private(problem, u, b, make_rng(seed), state.get("calibration"), state.get("level"),
                          fallback=state.fallback())
    except InputError as exc:
        st.error(str(exc))
        return
    rec = state.keep_teaching_run(run, name, seed)  # never charged, never shown on the Report
    cards.summary(run, name, seed)
    # on_click="ignore": a rerun would draw fresh noise and change the numbers just saved.
    st.download_button(
        "Save teaching snapshot", teaching_snapshot(rec, problem, data), snapshot_name(name), "text/markdown",
        key="teaching_snapshot", on_click="ignore", icon=":material/school:",
        help="This run's settings and numbers, non-private ones included, in a text file whose first line says "
        "TEACHING — NOT PRIVATE, NOT CHARGED. It is not a report: only a Publish-mode release reaches the Report.",
    )
    cards.stage0_card(problem, data, u if isinstance(u, int) else None)
    private_cards(run, b, name, problem, publish=False)


def release_once(problem: Problem) -> None:
    """One publish-mode draw from OS entropy, refused when it would pass the ledger's cap."""
    try:
        u, name = state.target(problem)
        b = controls.budget()
        refused = state.refuse_reason(b.epsilon_total, b.delta_total)
        if refused:
            st.error(refused)
            return
        run = run_private(problem, u, b, make_rng(None), state.get("calibration"), state.get("level"),
                          fallback=state.fallback())
        state.publish(run, name)  # charges the ledger, then records the release for the Report
    except InputError as exc:
        st.error(str(exc))
        return
    st.rerun()  # so the sidebar's ledger shows the new spend


def publish(problem: Problem) -> None:
    if st.button("Release (spends ε, δ)", key="release", type="primary", icon=":material/publish:",
                 help="Runs Algorithm 5 once with fresh noise from the OS and adds (ε, δ) to the ledger of these data"):
        release_once(problem)
    rec = state.published()
    if rec is None:
        st.info("Nothing released yet on these data and model settings. Each release draws fresh noise and "
                "spends its (ε, δ); the last one appears on the Report page.")
        return
    b = rec.budget
    st.caption(f"The last release on these data: `{rec.coordinate}` at ε = {b.epsilon_total:g}, "
               f"δ = {b.delta_total:g}, {rec.calibration} calibration, level {rec.level:.0%}.")
    private_cards(rec.run, b, rec.coordinate, problem, publish=True)


def data_error(exc: InputError) -> None:
    st.error(str(exc))
    st.page_link("pages/data.py", label="Open the Data page to load or fix the data", icon=":material/table:")


def main() -> None:
    state.ensure()  # a direct link can run this page before app.py has run
    st.title("Privately releasing one coefficient")
    if state.is_publish():
        st.caption("Publish mode: only what Algorithm 5 releases is shown, each release spends budget, "
                   "and noise comes from the operating system.")
    else:
        st.caption(f"Teaching mode: numbers tagged {NOT_PRIVATE} are computed from the data without privacy and "
                   "must not be published; the others may be.")
    try:
        data = state.dataset()
    except InputError as exc:
        data_error(exc)
        return
    controls.controls(data.feature_names)
    try:
        problem = state.problem()
    except InputError as exc:
        st.error(str(exc))
        return
    if state.is_publish():
        publish(problem)
    else:
        teaching(problem, data)


main()
