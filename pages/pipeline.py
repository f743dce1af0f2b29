"""Pipeline page: Algorithm 5 on the loaded data, one card per stage.

The data and the fit (stage 0) come from ui.loaded, cached on the data and model settings only; the
coordinate and model settings rerun the page. The budget and the private stages form one fragment, so
an ε or δ change reruns only them. Teaching mode draws noise (seeded, or fresh from the OS) when a
private setting changes or "Draw fresh noise" is pressed, and shows that same draw until then (a
display toggle never redraws); it charges nothing and offers its run only as a snapshot labelled
TEACHING — NOT PRIVATE. Publish mode draws once per click of the release button, charges the ledger,
and only such a charged release reaches the Report. Noise is never cached across sessions or reused
for a release; the what-ifs, deterministic functions of the data, are cached (ui.cache). The cards
are in ui.cards and ui.release_cards, the settings in ui.controls, the snapshot in ui.snapshot."""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data.folder import SourceData
from core.errors import InputError, PspError
from core.mechanisms.pipeline import PrivateRun, Problem
from core.plan import preview
from core.privacy.access import Spender
from core.privacy.accounting import Budget
from core.privacy.marks import public
from ui import access, cards, controls, loaded, params, release, release_cards, session, sidebar
from ui.boot import through_navigation
from ui.export import reproduce_downloads
from ui.format import md, num, released_what
from ui.labels import message
from ui.snapshot import snapshot_name, teaching_snapshot
from ui.theme import NOT_PRIVATE

through_navigation()  # a deep link's first run on a fresh server goes through app.py


def private_cards(run: PrivateRun, b: Budget, name: str, problem: Problem, publish: bool) -> None:
    """Stages 1-4 and the budget; publish mode hands the cards only the run's public view (core.privacy.marks.public),
    so a card that reached for a non-private number would fail rather than show it."""
    shown = None if publish else problem
    if publish:
        run = public(run)
    cards.lambda_min_card(run, shown)
    cards.lambda_max_card(run, shown)
    cards.test_card(run, b, shown, problem.geometry, problem.n)
    release_cards.release_card(run, name, shown)
    release_cards.budget_card(b, run.lambda_max is not None, run.release)


def teaching(problem: Problem, data: SourceData, b: Budget, top: DeltaGenerator) -> None:
    """The summary and the downloads in top (above the fit), stages 1-4 and the budget here (below it)."""
    try:
        rec = release.teaching(problem, b)
    except PspError as exc:
        top.error(message(exc))
        return
    run, name, seed = rec.run, rec.plan.name, rec.plan.seed
    with top:
        release_cards.summary(run, name, seed)
        release_cards.projection_note(problem)
        # on_click="ignore": the download needs no rerun.
        st.download_button(
            "Save teaching snapshot", teaching_snapshot(rec, problem, data), snapshot_name(name), "text/markdown",
            key="teaching_snapshot", on_click="ignore", icon=":material/school:",
            help="This run's settings and numbers, non-private ones included, in a text file whose first line says "
            "TEACHING — NOT PRIVATE, NOT CHARGED. It is not a report: only a Publish-mode release reaches the "
            "Report.",
        )
        reproduce_downloads(rec.plan)
    private_cards(run, b, name, problem, publish=False)


def release_once(problem: Problem, b: Budget,
                 step: Callable[[Problem, Budget, Spender], object] = release.publish) -> None:
    """One publish-mode step with OS entropy — a whole release, its release event, or (certify first) its
    certificates — for whoever may spend from this browser, refused when it would pass the ledger's cap or their
    share."""
    try:
        step(problem, b, access.require())  # charged per person before any noise; refused past the cap, nothing spent
    except PspError as exc:
        st.error(message(exc))
        return
    st.rerun()  # the whole app, so the sidebar's ledger shows the new spend


def publish(problem: Problem, b: Budget) -> None:
    try:
        who, why = access.decide()
    except PspError as exc:  # an unusable ledger refuses every release
        st.error(message(exc))
        return
    if why is not None:  # a reader: one sentence where the spending controls would be
        st.info(why, icon=":material/visibility:")
        last_release(problem)
        return
    waiting = release.certification(problem, b)
    try:
        blocked = release.refusal_notice(b, who, "whole" if waiting is None else "release")
        first, rest = release.cost(b, "certificates"), release.cost(b, "release")
    except PspError as exc:  # no cap, an unusable ledger file, or a budget that cannot be phased
        blocked, first, rest = message(exc), None, None
        st.error(blocked)
    else:
        if blocked:
            st.warning(blocked, icon=":material/block:")
    with st.container(horizontal=True):
        certify = st.button(
            "Certify first" if first is None else f"Certify first (spends ε = {first[0]:.3g})", key="certify",
            icon=":material/fact_check:", disabled=blocked is not None or waiting is not None,
            help="Draws the certificates λ̂min and λ̂max and the test (14) only, charged now, and shows what the "
                 "release would give; you may stop there, or release and spend the rest")
        go = st.button("Release (spends ε, δ)" if waiting is None or rest is None
                       else f"Release (spends the rest, ε = {rest[0]:.3g})",
                       key="release", type="primary", icon=":material/publish:", disabled=blocked is not None,
                       help="Runs Algorithm 5 once with fresh noise from the OS and adds (ε, δ) to the ledger of these "
                            "data (after Certify first: the release event only, from those certificates)")
    notice = release.worst_case_notice(problem, b) if waiting is None else None
    if notice is not None:
        st.caption(f":material/warning: {notice}")
    if certify:
        release_once(problem, b, release.certify_first)
    if go:
        release_once(problem, b)  # checks again: another session may have spent since this page was drawn
    if waiting is not None and rest is not None:
        release_cards.preview_card(preview(waiting.plan, problem, waiting.certified), params.get("level"), rest)
    table = release.table_certification_uid(problem, tuple(table_names(problem)), b)  # its own section shows it
    shown = {uid for uid in (None if waiting is None else waiting.certification.uid, table) if uid is not None}
    others_waiting(shown)  # this browser may spend, so close
    last_release(problem)


def last_release(problem: Problem) -> None:
    """This session's last release on these data, or the newest one the ledger holds on these people, or a line
    saying there is none."""
    rec = release.published()
    if rec is None:
        if loaded.unkeyed():
            st.info(loaded.UNKEYED, icon=":material/info:")
        elif not last_paid_for():
            st.info("Nothing released yet on these people. Each release draws fresh noise and spends its (ε, δ); "
                    "the last one appears on the Report page.")
        return
    p = rec.plan
    st.caption(f"The last release on these data: `{p.name}` at ε = {p.budget.epsilon_total:g}, "
               f"δ = {p.budget.delta_total:g}, {p.calibration} calibration, level {p.level:.0%}.")
    private_cards(rec.run, p.budget, p.name, problem, publish=True)


def others_waiting(shown: set[str]) -> None:
    """Certificates bought on these people for other settings (not the release's or the table's the page shows):
    what they were for, and a way to close them unspent (never dropped silently). Drawn only for a browser that may
    spend."""
    try:
        others = [c for c in release.other_certifications() if c.uid not in shown]
    except PspError:  # an unusable ledger: the refusal above already says so
        return
    for c in others:
        s = c.summary
        st.info(f"Certificates bought for `{s['coefficient']}` at ε = {s['epsilon']:g}, δ = {s['delta']:g} (level "
                f"{s['level']:.0%}, {s['calibration']} calibration) wait on these people: set those settings to "
                "release from them, once, or close them unspent (what they cost stays spent).",
                icon=":material/hourglass_top:")
        if st.button("Close these certificates unspent", key=f"close_{c.uid}", icon=":material/cancel:"):
            release.close_certification(c.uid)
            st.rerun()


def table_section(problem: Problem) -> None:
    """A regression table: several coefficients in one release at the total budget (core.mechanisms.table), drawn for
    teaching or, in publish mode, charged once; the last one stays on the page (and, charged, goes to the Report)."""
    publish_mode = params.is_publish()
    st.markdown("### A regression table")
    st.caption("Several coefficients in one release of the budget above, charged once whatever their number: the "
               "certificates and the test (14) once, then one mechanism on the whole vector (the Gaussian step if "
               "the test passes, else the fallback), of which the chosen coefficients are published.")
    every = list(problem.feature_names)
    chosen = table_names(problem)
    unknown = [params.shown(name) for name in params.get("coordinates") if name not in every]
    if unknown:  # a link's names these data do not have: said, never dropped in silence
        st.warning(f"The table's coefficient{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} from the link "
                   f"{'are not features' if len(unknown) > 1 else 'is not a feature'} of these data, so "
                   f"{'they were' if len(unknown) > 1 else 'it was'} left out; choose the coefficients under "
                   "“Coefficients of the table”.", icon=":material/link_off:")
    # In a popover: its list is drawn only when opened, so a new tab does not fetch the list's code.
    with st.popover(f"Coefficients of the table: {coefficients_label(chosen, every)}", icon=":material/checklist:"):
        names = st.multiselect("Coefficients of the table", every, default=chosen, key="table_names",
                               on_change=keep_table, args=(every,),
                               help="The table releases these together; all of them cost as one")
    controls.coverage_control()
    try:
        who, why = access.decide() if publish_mode else (None, None)
        if why is not None:  # a reader: the release's own notice above says why, in full
            st.caption(f":material/visibility: {why}")
        b = controls.budget()
        blocked = release.refusal_notice(b, who) if who is not None and why is None else None
    except PspError as exc:
        if publish_mode:  # the budget's own card says why a budget is refused; a ledger without a cap is told here
            st.error(message(exc))
        return
    if blocked:  # the release's own warning above says it in full; a table costs the same
        st.caption(f":material/block: {blocked}")
    held = release.table_certification(problem, tuple(names), b) if publish_mode and names and why is None else None
    first, rest = phase_costs(b) if publish_mode else (None, None)
    with st.container(horizontal=True):
        if publish_mode:
            certify = st.button("Certify the table first" + ("" if first is None else f" (spends ε = {first[0]:.3g})"),
                                key="certify_table", icon=":material/fact_check:",
                                disabled=(not names or blocked is not None or why is not None or held is not None
                                          or first is None),
                                help="Draws the certificates and the test (14) only, charged now, and forecasts each "
                                     "row's interval; you may stop there, or release the table and spend the rest")
        rest = rest if held is not None else None
        label = ("Draw a table" if not publish_mode else "Release the table (spends ε, δ)" if rest is None
                 else f"Release the table (spends the rest, ε = {rest[0]:.3g})")
        go = st.button(label, key="release_table", disabled=not names or blocked is not None or why is not None,
                       icon=":material/table_chart:",
                       help="Fresh noise from the OS, charged per person before any noise" if publish_mode else
                       "Teaching: the noise seed's draw (or fresh), never charged and never reported")
    if publish_mode and certify:
        table_step(release.certify_table_first, problem, names, b)
    if go:
        table_step(release.publish_table if publish_mode else None, problem, names, b)
    if held is not None:
        release_cards.table_preview_card(preview(held.plan, problem, held.certified), rest)
    record = release.table_record()
    if record is None:
        return
    fitted = None if publish_mode else dict(zip(record.release.names, record.release.fitted, strict=True))
    release_cards.table_view(record.document, "pipeline_table", fitted)


def table_names(problem: Problem) -> list[str]:
    """The table's coefficients the settings name: the link's, on these data, or every one."""
    every = list(problem.feature_names)
    return [name for name in params.get("coordinates") if name in every] or every


def phase_costs(b: Budget) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """What the certificates and the release event each cost a person of the loaded data; (None, None) for a budget
    that cannot be phased (its card says why)."""
    try:
        return release.cost(b, "certificates"), release.cost(b, "release")
    except PspError:
        return None, None


def table_step(step: Callable[[Problem, tuple[str, ...], Budget, Spender], object] | None, problem: Problem,
               names: list[str], b: Budget) -> None:
    """One step of the table: a teaching draw (step None), or a charged phase for whoever may spend from this
    browser, then the whole app again so that the sidebar's ledger shows the new spend."""
    try:
        if step is None:
            release.draw_table(problem, tuple(names), b)
            return
        step(problem, tuple(names), b, access.require())
    except PspError as exc:
        st.error(message(exc))
        return
    st.rerun()


def coefficients_label(chosen: list[str], every: list[str]) -> str:
    """The chosen coefficients in a few words: all of them, or up to three names."""
    if set(chosen) == set(every):
        return f"all {len(every)}"
    return ", ".join(chosen[:3]) + (f" and {len(chosen) - 3} more" if len(chosen) > 3 else "")


def keep_table(every: list[str]) -> None:
    """The table's coefficients into the setting the link keeps (none when every one is chosen)."""
    chosen = st.session_state["table_names"]
    st.session_state["coordinates"] = [] if set(chosen) == set(every) else list(chosen)


def last_paid_for() -> bool:
    """The newest charged release on these people, read back from the ledger (another session's, or this browser's
    before a reload): private values only, and no charge. Whether there was one."""
    try:
        entry = release.latest_paid_for()
    except PspError:  # an unusable ledger: the refusal above already says so
        return False
    if entry is None:
        return False
    d = entry.details
    # The release's own budget, from its report: a release certified first was charged in two entries, this the last.
    budget = json.loads(d.document)["guarantee"]
    if d.outcome == "bottom":
        shown = "⊥ (nothing released)"
    elif d.value is None:  # a regression table: its rows are on the Report
        shown = "released" if d.outcome == "released" else "released by the fallback"
    else:
        shown = f"{num(d.value)}, interval [{num(d.low)}, {num(d.high)}]"
    st.caption(f"The last paid-for release on these people, read back from the privacy ledger: "
               f"{md(released_what(d.coefficient))} {shown} at ε = {budget['epsilon']:g}, δ = {budget['delta']:g}. "
               "Its full report is on the Report page; showing it charges nothing.")
    return True


def data_error(exc: InputError) -> None:
    st.error(message(exc))
    st.page_link("pages/data.py", label="Open the Data page to load or fix the data", icon=":material/table:")


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Privately releasing one coefficient")
    if params.is_publish():
        st.caption("Publish mode: only what Algorithm 5 releases is shown, each release spends budget, "
                   "and noise comes from the operating system.")
    else:
        st.caption(f"Teaching mode: numbers tagged {NOT_PRIVATE} are computed from the data without privacy and "
                   "must not be published; the others may be.")
    try:
        data = loaded.dataset()
    except PspError as exc:
        data_error(exc)
        return
    controls.controls(data.feature_names)
    try:
        problem = loaded.problem()
    except PspError as exc:
        st.error(message(exc))
        return
    top = st.container()  # the budget and the summary: written by the fragment below
    if not params.is_publish():
        fit_card(problem, data)
    private_section(problem, data, top)
    table_section(problem)


def fit_card(problem: Problem, data: SourceData) -> None:
    """Stage 0 between the budget and the private stages, outside their fragment: a budget change leaves it as is."""
    try:
        u, _ = release.target(problem)
    except PspError:  # the fragment says why
        return
    cards.stage0_card(problem, data, u if isinstance(u, int) else None)


@session.fragment
def private_section(problem: Problem, data: SourceData, top: DeltaGenerator) -> None:
    """The budget and the summary (in top, above the fit), the private stages (below it) and the sidebar's budget
    line: a fragment, so an ε or δ change reruns only these; the fit and the data are unchanged by it."""
    with top:
        controls.privacy_controls(data.n)
    sidebar.budget_line(st.sidebar)
    try:
        b = controls.budget()
    except PspError as exc:
        top.error(message(exc))
        return
    if params.is_publish():
        with top:
            publish(problem, b)
    else:
        teaching(problem, data, b, top)
    params.sync_url()  # a fragment's rerun skips app.py's: the link must keep the new ε and δ

main()
