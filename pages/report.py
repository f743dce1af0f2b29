"""Report page: what this server has published, for stakeholders, in words first, with HTML and JSON downloads.

Every publication has a permanent address, /report?release=<its ledger uid>: it is read from the ledger, needs no
data settings and charges nothing. A bare /report shows the last publication on the loaded data's people (this
session's, or the ledger's), then the index of everything the server has published, by people, newest first.
Only charged releases are shown: teaching runs (seeded or not, never charged) never reach this page. Everything shown
is read from a private document (core.report), which holds private values and public settings only, so nothing
computed from the data without privacy can reach the screen or a download.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from core.errors import PspError
from core.mechanisms.release import RIDGE
from core.privacy.ledger import Certification, LedgerEntry
from core.privacy.population import Population
from core.report import PUBLICATION_PATH, first_sentence, interval_scope, level_words, published_report, target_of
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
    table_summary,
    test_outcome,
)

through_navigation()  # a deep link's first run on a fresh server goes through app.py
UID = re.compile(r"[0-9a-f]{32}")  # a ledger entry's uid, as a permanent address names it
TRAILING = ").,;:!?'\"»”’>]"  # punctuation a pasted address may carry at its end

# ---------------------------------------------------------------- page


def build(record: release.PublishedRelease) -> dict:
    """The report of a published release; published runs drew OS noise, so no seed is ever passed."""
    data, p = loaded.dataset(), record.plan
    rep = published_report(record.run, p.name, p.budget, p.data, p.model, data.n, data.d, data.feature_names,
                           data.privacy_unit)
    return rep | {"ledger": ledger_account(p.data.population(), record.uid)}


def ledger_account(people: Population, uid: str | None = None) -> dict:
    """What the durable ledger held on these people when the entry uid was charged (it included; None: now): spent,
    and every charged release (private outputs and public settings only), the certificates of a release certified
    first named by its coefficient. The log is append-only, so a publication's account never changes (what came
    later is `since_then`). A reader's history lists publications only (sees_every_charge)."""
    book = release.ledger()
    entries = book.entries(people) if uid is None else book.entries_until(people, uid)
    spent_e, spent_d = book.spent(people) if uid is None else book.spent_until(people, uid)
    bought = {c.entry: c for c in book.certifications(people)}
    every = sees_every_charge()
    history = [dict(time=datetime.fromtimestamp(e.time, UTC).isoformat(timespec="seconds"), epsilon=e.epsilon,
                    delta=e.delta, by=e.spender, **what_it_bought(e, bought.get(e.uid)))
               for e in entries if every or is_publication(e)]
    account = dict(population=people.describe(), spent_epsilon=spent_e, spent_delta=spent_d, history=history)
    if uid is None:  # now, no document: where the budget stands too
        (cap_e, cap_d), (left_e, left_d) = book.cap(people), book.remaining(people)
        account |= dict(cap_epsilon=cap_e, cap_delta=cap_d, remaining_epsilon=left_e, remaining_delta=left_d)
    return account


def since_then(people: Population, uid: str, then: tuple[float, float]) -> str:
    """A dated line, apart from the document: what was charged on these people after the entry uid (then: what they
    had spent with it, the document's ledger section), and where their budget stands now."""
    book = release.ledger()
    later = len(book.entries(people)) - len(book.entries_until(people, uid))
    (spent_e, spent_d), (cap_e, cap_d), (left_e, left_d) = book.spent(people), book.cap(people), book.remaining(people)
    then_e, then_d = then
    now = shown_time(datetime.now(UTC))
    after = ("nothing more has been charged on these people since" if later == 0 else
             f"{later} more charge{'s' if later > 1 else ''} on these people since spent ε = {num(spent_e - then_e)}, "
             f"δ = {max(0.0, spent_d - then_d):.3g}")
    return (f"Now ({now}), apart from the document: {after}; in all ε = {num(spent_e)}, δ = {spent_d:.3g} of the "
            f"data curator's cap ε = {num(cap_e)}, δ = {cap_d:g} is spent, and ε = {num(left_e)}, δ = {left_d:.3g} "
            "remains.")


def sees_every_charge() -> bool:
    """Whether this browser may see the charges that published nothing (certificates drawing, open, closed or failed,
    with their λ̂min and test; failed releases): only whoever may spend (ui.access). A reader sees publications only."""
    try:
        return access.spend_refusal() is None
    except PspError:  # an unusable ledger cannot tell who this is
        return False


def is_publication(e: LedgerEntry) -> bool:
    """Whether a charge published its release: it kept the release's private document (as Ledger.publications)."""
    return e.details is not None and bool(e.details.document)


CERTIFICATES = {"drawing": "certificates, being drawn", "open": "certificates, waiting for their release",
                "finished": "certificates, released below", "closed": "certificates only, closed unspent",
                "failed": "certificates, failed"}


def what_it_bought(e: LedgerEntry, bought: Certification | None) -> dict:
    """An entry's coefficient and outcome (with its value and interval), or a certification's coefficient and state."""
    if e.details is not None:
        d = e.details
        return dict(coefficient=d.coefficient, outcome=d.outcome, value=d.value,
                    interval=None if d.low is None else [d.low, d.high])
    if bought is not None:
        return dict(coefficient=bought.summary.get("coefficient", ""),
                    outcome=CERTIFICATES[bought.state] + certificates_words(bought.certificates))
    return {}


def certificates_words(kept: str | None) -> str:
    """What certificates bought first found, in words (their private outputs as the ledger keeps them), or ""."""
    if kept is None:
        return ""
    c = json.loads(kept)
    test = "passed" if c["passed"] else "failed"
    return f" (λ̂min = {num(c['lambda_min'])}, the test (14) {test})"


def kept_entry() -> LedgerEntry | None:
    """The newest charged release on the loaded data's people whose private report the ledger kept; None without."""
    try:
        return release.ledger().latest_report(loaded.people())
    except PspError:  # no data, or an unusable ledger: there is nothing to read back
        return None


def ledger_history() -> None:
    """Without a publication on the loaded data's people: what the durable ledger holds on them (certificates bought,
    failed releases), for whoever may spend; a reader's lists publications only, so none here."""
    try:
        account = ledger_account(loaded.people())
    except PspError:  # no data, or an unusable ledger: there is nothing to show
        return
    if account["history"]:
        st.markdown("##### Privacy ledger of these people (releases of every session)")
        bullets(ledger_rows({"ledger": account}, "Spent on these people"))


def bullets(rows: list[tuple[str, str]]) -> None:
    st.markdown("\n".join(f"- **{md(k)}** · {md(v)}" for k, v in rows))


def show(rep: dict, source: str) -> None:
    """A first screen in words (no formula), then the technical appendix; source names the data's kind for the
    privacy unit ("": the document's own words)."""
    r, lmax = rep["release"], rep["lambda_max"]
    st.markdown(f"**Data** · {md(rep['data']['source'])} · n = {rep['data']['n']:,}, d = {rep['data']['d']}")
    value, detail = headline(rep)
    shown = [(f"Released value · {md(coefficient(rep))}", value, "The private estimate of the coefficient")]
    if r["interval"] is not None:
        ridge = target_of(r) == RIDGE
        shown.append((f"{level_words(r).capitalize()} private range" + (" of the ridge fit" if ridge else ""),
                      interval(r["interval"]), "For the coefficient of the ridge-regularised fit on these data, pulled "
                      "toward 0 by the ridge: no range of the fitted coefficient could be certified" if ridge else
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
        st.info(md(privacy_unit(rep, source)), icon=":material/person:")
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


def downloads(rep: dict, record: release.PublishedRelease | None, source: str) -> None:
    """HTML and JSON, and with a release of this session its script (a release read back from the ledger has no
    settings object to write one from)."""
    if record is not None:
        rep = rep | {"address": address(record.uid)}
    with st.container(horizontal=True, key="report_actions"):
        document_downloads(rep, report_html(rep, source), "private_release")
        if record is not None:
            rerun_download(record.plan)


def document_downloads(doc: dict, page: str, stem: str) -> None:
    """A document as one self-contained HTML page and as JSON, named stem.html and stem.json."""
    st.download_button("Download HTML report", page, f"{stem}.html", "text/html", icon=":material/download:",
                       help="One self-contained page to share")
    st.download_button("Download JSON", json.dumps(doc, indent=2, ensure_ascii=False), f"{stem}.json",
                       "application/json", icon=":material/data_object:", help="The same values, machine-readable")


def show_table(doc: dict, source: str, people: Population, uid: str) -> None:
    """A regression table: its findings in words, the table and its forest plot, then the guarantee and the ledger
    (ledger_section)."""
    st.markdown(f"**Data** · {md(doc['data']['source'])} · n = {doc['data']['n']:,}, d = {doc['data']['d']}")
    st.markdown("\n".join(f"- {md(line)}" for line in table_summary(doc)))
    release_cards.table_view(doc, "report_table")
    st.success(md(table_guarantee(doc)), icon=":material/verified_user:")
    st.info(md(privacy_unit(doc, source)), icon=":material/person:")
    ledger_section(doc, people, uid)
    with st.container(horizontal=True, key="report_actions"):
        document_downloads(doc, table_html(doc, source), "private_table")


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Report")
    st.caption("For stakeholders: only a release made in Publish mode and charged to the privacy ledger appears "
               "here. Every value was released by the mechanism or is a public setting (n and d are treated as "
               "public); nothing computed from the data without privacy appears.")
    print_style()
    wanted = st.query_params.get(params.RELEASE)
    if wanted is not None:
        by_address(wanted)
        return
    if last_on_loaded_data():
        index()


def last_on_loaded_data() -> bool:
    """The last publication on the loaded data's people: this session's, else the ledger's newest; else the index of
    everything published, then a line. Whether the index is still to be drawn."""
    source = params.get("source")  # the loaded data's kind: these documents are of their people
    kept = kept_entry()
    kept_doc = None if kept is None else json.loads(kept.details.document)
    if kept_doc is not None and "table" in kept_doc:  # a table is the newest: it is the subject
        publication(kept, kept_doc, source)
        return True
    try:
        record = release.published()  # matched on the loaded data's settings, so the data must load
    except (PspError, OSError) as exc:
        st.error(message(exc))
        return True
    if record is None and kept is not None:
        publication(kept, kept_doc, source)
        return True
    if record is None:  # nothing on the loaded data's people: what this server did publish comes first
        index()
        nothing()
        ledger_history()
        return False
    try:
        rep = build(record)
    except (PspError, OSError) as exc:  # the data could not be reloaded for n and d
        st.error(message(exc))
        return True
    st.caption(f"Its permanent address: {address(record.uid)}")
    show(rep, source)
    ledger_section(rep, record.plan.data.population(), record.uid)
    downloads(rep, record, source)
    return True


def by_address(wanted: str) -> None:
    """The publication at a permanent address, read from the ledger (no data settings, no charge); an address that
    names none gets one sentence and the index, never another release."""
    wanted = wanted.strip().rstrip(TRAILING).lower()  # as a mail client or a slide may have left it
    try:
        entry = release.ledger().publication(wanted) if UID.fullmatch(wanted) else None
    except PspError as exc:  # an unusable ledger
        st.error(message(exc))
        return
    if entry is None:
        quoted = "this address" if params.looks_like_key(wanted) else f"the address “release={params.shown(wanted)}”"
        st.warning(f"This server has published nothing at {quoted}; here is everything it has published.",
                   icon=":material/link_off:")
        index()
        return
    # Any people's publication: its privacy unit is worded from the document, never from the loaded data's kind.
    publication(entry, json.loads(entry.details.document), "")
    st.page_link("pages/report.py", label="Everything this server has published", icon=":material/list:")


def publication(entry: LedgerEntry, kept: dict, source: str) -> None:
    """One publication read back from the ledger (kept: its document), with the ledger's account of its people as it
    stood when it was published (and, apart, a dated line of now); source as for `show`."""
    doc = kept | {"ledger": ledger_account(entry.population, entry.uid), "address": address(entry.uid)}
    what = "a regression table" if "table" in doc else "a release"
    st.info(f"Read back from the privacy ledger: {what} on {entry.population.describe()}, charged {charged(entry)}. "
            f"Showing it again charges nothing. Its permanent address: {doc['address']}", icon=":material/history:")
    if "table" in doc:
        show_table(doc, source, entry.population, entry.uid)
        return
    show(doc, source)
    ledger_section(doc, entry.population, entry.uid)
    downloads(doc, None, source)


def ledger_section(doc: dict, people: Population, uid: str) -> None:
    """The document's ledger of its people as it stood when it was published, then, apart, the dated line of now."""
    st.markdown("##### Privacy ledger of these people")
    bullets(ledger_rows(doc))
    st.caption(md(since_then(people, uid, (doc["ledger"]["spent_epsilon"], doc["ledger"]["spent_delta"]))))


def charged(entry: LedgerEntry) -> str:
    """When an entry was charged, as the page shows times."""
    return shown_time(datetime.fromtimestamp(entry.time, UTC))


def index() -> None:
    """Everything this server has published, by people, newest first, each with its first sentence and address."""
    try:
        entries = release.ledger().publications()
    except PspError as exc:
        st.error(message(exc))
        return
    st.markdown("##### Everything this server has published")
    if not entries:
        st.caption("Nothing yet: each release made in Publish mode, here or from the command line, appears here.")
        return
    people: dict[str, list[LedgerEntry]] = {}
    for e in entries:
        people.setdefault(e.population.describe(), []).append(e)
    for who, theirs in people.items():
        st.markdown(f"**{md(who)}**")
        st.markdown("\n".join(f"- [{charged(e)} · {md(e.details.coefficient)}]"
                               f"(?{params.RELEASE}={e.uid}) · {md(first_sentence(json.loads(e.details.document)))}"
                               for e in theirs))


def address(uid: str) -> str:
    """A publication's permanent address on this server: the Report's URL with release=<uid>."""
    url = urlsplit(st.context.url or "")
    return urlunsplit((url.scheme, url.netloc, url.path, f"{params.RELEASE}={uid}", "")) if url.netloc else \
        PUBLICATION_PATH + uid


PRINT_CSS = """<style>@media print {
section[data-testid='stSidebar'], header, [data-testid='stToolbar'], .stButton, .stDownloadButton,
[data-testid='stPageLink'],
[data-testid='stElementContainer']:has(> :is(.stButton, .stDownloadButton, [data-testid='stPageLink'])),
[data-testid='stLayoutWrapper']:has(> .st-key-report_actions) { display: none !important; }
details::details-content { content-visibility: visible !important; display: block !important;
                           block-size: auto !important; }
details > summary svg { display: none !important; }
[data-testid='stAppViewContainer'], [data-testid='stMain'] { height: auto !important; overflow: visible !important; }
[data-testid='stMainBlockContainer'] { padding: 0 !important; max-width: none !important; }
.psp-figure svg { width: 100% !important; height: auto !important; }
}</style>"""  # a closed expander's content is in the page: printed open (Chromium's ::details-content); a hidden
# control's container goes too, as the column's gap before it could carry the page's last lines onto a blank page


def print_style() -> None:
    """Printed, the page is the document: no sidebar, header, toolbar or buttons; the technical appendix open; the
    figures across the page; no screen-height containers to leave a blank page."""
    st.html(PRINT_CSS)


def nothing() -> None:
    """Nothing published on these people: said in words, with how to publish only for whoever may (or, where their
    folder is not keyed on this server, that it is not known)."""
    if loaded.unkeyed():
        st.info(loaded.UNKEYED, icon=":material/info:")
        return
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
