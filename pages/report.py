"""Report page: the last published release on one screen for stakeholders, with HTML and JSON downloads.

Only a `release.PublishedRelease` is shown: a Publish-mode release drawn from OS entropy and charged
to the ledger. Teaching runs (seeded or not, never charged) never reach this page; without a
published release on the loaded data and model, the page says how to make one and offers no
download. Everything shown is read from core.report.private_report's dictionary, which holds
private values and public settings only, so nothing computed from the data without privacy can
reach the screen or a download.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import streamlit as st

from core.errors import PspError
from core.privacy.population import Population
from core.report import interval_scope, published_report
from ui import access, loaded, params, release, release_cards, session
from ui.boot import through_navigation
from ui.export import rerun_download
from ui.format import interval, md, metric_row, num
from ui.formulas import (
    LAMBDA_MAX,
    LAMBDA_MIN,
    TEST,
)
from ui.labels import message
from ui.report_text import (
    coefficient,
    guarantee,
    headline,
    ledger_rows,
    method,
    privacy_unit,
    report_html,
    settings,
    shown_time,
    summary,
    table_guarantee,
    table_html,
    test_outcome,
)

through_navigation()  # a deep link's first run on a fresh server goes through app.py

# ---------------------------------------------------------------- page


def build(record: release.PublishedRelease) -> dict:
    """The report of a published release; published runs drew OS noise, so no seed is ever passed."""
    data, p = loaded.dataset(), record.plan
    rep = published_report(record.run, p.name, p.budget, p.data, p.model, data.n, data.d, data.feature_names,
                           data.privacy_unit)
    return rep | {"ledger": ledger_account(p.data.population())}


def ledger_account(people: Population) -> dict:
    """What the durable ledger holds on these people: spent, cap, remaining and every charged release (private
    outputs and public settings only)."""
    book = release.ledger()
    (spent_e, spent_d), (cap_e, cap_d), (left_e, left_d) = book.spent(people), book.cap(people), book.remaining(people)
    history = [
        dict(time=datetime.fromtimestamp(e.time, UTC).isoformat(timespec="seconds"), epsilon=e.epsilon,
             delta=e.delta, by=e.spender, **({} if e.details is None else dict(
                 coefficient=e.details.coefficient, outcome=e.details.outcome, value=e.details.value,
                 interval=None if e.details.low is None else [e.details.low, e.details.high])))
        for e in book.entries(people)
    ]
    return dict(population=people.describe(), spent_epsilon=spent_e, spent_delta=spent_d, cap_epsilon=cap_e,
                cap_delta=cap_d, remaining_epsilon=left_e, remaining_delta=left_d, history=history)


def kept_report() -> tuple[dict, str] | None:
    """The newest charged release on the loaded data's people whose private report the ledger kept, with the ledger's
    account as of now, and when it was charged; None without one."""
    try:
        people = loaded.data_spec().population()
        newest = release.ledger().latest_report(people)
    except PspError:  # no data, or an unusable ledger: there is nothing to read back
        return None
    if newest is None:
        return None
    when = shown_time(datetime.fromtimestamp(newest.time, UTC))
    return json.loads(newest.details.document) | {"ledger": ledger_account(people)}, when


def ledger_history() -> None:
    """Without a release of this session: what the durable ledger holds on the people of the loaded data."""
    try:
        account = ledger_account(loaded.data_spec().population())
    except PspError:  # no data, or an unusable ledger: there is nothing to show
        return
    if account["history"]:
        st.markdown("##### Privacy ledger of these people (releases of every session)")
        bullets(ledger_rows({"ledger": account}))


def bullets(rows: list[tuple[str, str]]) -> None:
    st.markdown("\n".join(f"- **{md(k)}** · {md(v)}" for k, v in rows))


def show(rep: dict) -> None:
    """A first screen in words (no formula), then the technical appendix."""
    r, lmax = rep["release"], rep["lambda_max"]
    st.markdown(f"**Data** · {md(rep['data']['source'])} · n = {rep['data']['n']:,}, d = {rep['data']['d']}")
    value, detail = headline(rep)
    shown = [(f"Released value · {md(coefficient(rep))}", value, "The private estimate of the coefficient")]
    if r["interval"] is not None:
        shown.append((f"{r['interval_level']:.0%} private range", interval(r["interval"]),
                      "For the people in these data, allowing for the privacy noise"))
    if r.get("population"):
        shown.append((f"{r['interval_level']:.0%} population range (approx.)", interval(r["population"]["interval"]),
                      "For the population the data were sampled from: sampling and privacy noise"))
    metric_row(shown, gap="large")
    st.markdown("\n".join(f"- {md(line)}" for line in summary(rep)))
    with st.expander("Technical appendix: the guarantee, the certificates, the method and the settings"):
        if r["interval"] is None:
            st.warning(md(detail), icon=":material/block:")
        else:
            st.caption(md(interval_scope(r)))
        if r.get("population"):
            st.caption(md(f"Population range: {r['population']['note']}."))
        metric_row([
            (LAMBDA_MIN.name, num(rep["lambda_min"]["lambda_hat"]),
             "Certified lower bound on the Hessian's smallest eigenvalue (Algorithm 2)"),
            (LAMBDA_MAX.name, "—" if lmax is None else num(lmax["lambda_hat"]),
             "Certified upper bound on its largest eigenvalue (Algorithm 4); not run when λ̂min = 0"),
            (TEST.name.capitalize(), "passed" if rep["test"]["passed"] else "failed", md(test_outcome(rep))),
        ], gap="large")
        st.success(md(guarantee(rep)), icon=":material/verified_user:")
        st.info(md(privacy_unit(rep, params.get("source"))), icon=":material/person:")
        st.markdown("**What the guarantee rests on**")
        for line in rep.get("assumptions") or ():
            st.markdown(f"- {md(line)}")
        method_col, settings_col = st.columns(2)
        with method_col:
            st.markdown("##### Method")
            bullets(method(rep))
        with settings_col:
            st.markdown("##### Settings")
            bullets(settings(rep))


def downloads(rep: dict, record: release.PublishedRelease | None) -> None:
    """HTML and JSON, and with a release of this session its script (a release read back from the ledger has no
    settings object to write one from)."""
    with st.container(horizontal=True):
        st.download_button("Download HTML report", report_html(rep, params.get("source")), "private_release.html",
                           "text/html",
                           icon=":material/download:", help="One self-contained page to share")
        st.download_button("Download JSON", json.dumps(rep, indent=2, ensure_ascii=False), "private_release.json",
                           "application/json", icon=":material/data_object:",
                           help="The same values, machine-readable")
        if record is not None:
            rerun_download(record.plan)


def show_table(doc: dict, when: str) -> None:
    st.info(f"The last paid-for release on these people is a regression table, charged {when}. Showing it "
            "again charges nothing.", icon=":material/table_chart:")
    st.markdown(f"**Data** · {md(doc['data']['source'])} · n = {doc['data']['n']:,}, d = {doc['data']['d']}")
    release_cards.table_view(doc, "report_table")
    st.success(md(table_guarantee(doc)), icon=":material/verified_user:")
    st.info(md(privacy_unit(doc, params.get("source"))), icon=":material/person:")
    st.markdown("##### Privacy ledger of these people")
    bullets(ledger_rows(doc))
    with st.container(horizontal=True):
        st.download_button("Download HTML report", table_html(doc, params.get("source")), "private_table.html",
                           "text/html",
                           icon=":material/download:", help="One self-contained page to share")
        st.download_button("Download JSON", json.dumps(doc, indent=2, ensure_ascii=False), "private_table.json",
                           "application/json", icon=":material/data_object:", help="The same values, machine-readable")


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Report")
    st.caption("For stakeholders: only a release made in Publish mode and charged to the privacy ledger appears "
               "here. Every value was released by the mechanism or is a public setting (n and d are treated as "
               "public); nothing computed from the data without privacy appears.")
    kept = kept_report()
    if kept is not None and "table" in kept[0]:  # the newest charge is a regression table: it is the page's subject
        show_table(*kept)
        return
    try:
        record = release.published()  # matched on the loaded data's settings, so the data must load
    except (PspError, OSError) as exc:
        st.error(message(exc))
        return
    if record is None and kept is not None:
        rep, when = kept
        st.info(f"Read back from the privacy ledger: the last paid-for release on these people, charged {when}. "
                "Showing it again charges nothing.", icon=":material/history:")
        show(rep)
        st.markdown("##### Privacy ledger of these people")
        bullets(ledger_rows(rep))
        downloads(rep, None)
        return
    if record is None:
        nothing()
        ledger_history()
        return
    try:
        rep = build(record)
    except (PspError, OSError) as exc:  # the data could not be reloaded for n and d
        st.error(message(exc))
        return
    show(rep)
    st.markdown("##### Privacy ledger of these people")
    bullets(ledger_rows(rep))
    downloads(rep, record)


def nothing() -> None:
    """Nothing published on these people: said in words, with how to publish only for whoever may."""
    try:
        reader = access.spend_refusal() is not None
    except PspError:  # an unusable ledger: nobody publishes
        reader = True
    if reader:
        st.info("Nothing has been published on these people yet.", icon=":material/info:")
        return
    st.info("Nothing has been published on these people yet. Teaching runs are not private and are never reported. "
            "To publish, switch the sidebar's Mode to Publish, then press Release on the Pipeline page.",
            icon=":material/info:")
    st.page_link("pages/pipeline.py", label="Open the Pipeline page", icon=":material/account_tree:")


main()
