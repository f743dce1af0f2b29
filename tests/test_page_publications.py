"""Publications a reader can open: every charged release has a permanent address, /report?release=<uid>, served from
the ledger with no data settings and no charge; a bare /report lists what the server has published, in words."""

from __future__ import annotations

import json
import re

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.cli import main as cli_main
from core.data.spec import SyntheticSpec
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec
from core.plan import (
    ReleasePlan,
    TablePlan,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_release_table,
)
from core.privacy.access import CURATOR
from core.privacy.accounting import make_budget
from core.privacy.ledger_store import open_ledger
from core.report import plain_table_summary
from ui.report_text import table_guarantee

LOGISTIC = SyntheticSpec("logistic", 6_000, 3, 1.0, 1.0, 4)  # not the app's loaded data: other people
ROBUST = SyntheticSpec("robust", 4_000, 3, 1.0, 1.0, 5)


@pytest.fixture(autouse=True)
def curator_cap():
    """The ledger file the app reads, with the curator's default cap."""
    open_ledger().set_default_cap((100.0, 1e-4))


def published(spec: SyntheticSpec, loss: str, coordinate: int = 1) -> str:
    """A release charged to the ledger the app reads (as the command line makes it); its entry's uid."""
    problem = prepare_spec(spec.load(), ModelSpec(loss).resolve(spec.d), spec)
    plan = ReleasePlan(data=spec, model=problem.model, target=coordinate, name=problem.feature_names[coordinate],
                       budget=make_budget(8.0, 1e-6), fallback=loss == "logistic")
    _, entry = charge_and_execute(plan, problem, open_ledger(), spender=CURATOR)
    return entry.uid


def published_table(spec: SyntheticSpec) -> str:
    problem = prepare_spec(spec.load(), ModelSpec("logistic").resolve(spec.d), spec)
    plan = TablePlan(data=spec, model=problem.model, indices=(0, 2), names=("x0", "x2"), budget=make_budget(8.0, 1e-6),
                     fallback=True)
    *_, entry = charge_and_release_table(plan, problem, open_ledger(), spender=CURATOR)
    return entry.uid


def fitted(uid: str) -> bool:
    """Whether the publication's interval is for the coefficient fitted on its rows (not the fallback's ridge fit's,
    as where its draw certified no curvature)."""
    return json.loads(open_ledger().publication(uid).details.document)["release"]["interval_target"] == "fitted"


def report(query: dict[str, str] | None = None, **settings: object) -> AppTest:
    """The Report opened from a link in a fresh browser: the app's default data loaded (small here), no release."""
    at = new_app(120, query=query, **{"n": 2_000, **settings})
    at.run()
    at.switch_page("pages/report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def text(at: AppTest) -> str:
    kinds = ("info", "warning", "markdown", "caption", "success")
    return "\n".join(e.value for kind in kinds for e in getattr(at, kind))


def charged() -> int:
    book = open_ledger()
    return sum(len(book.entries(p)) for p in book.parts_charged())


def test_a_permanent_address_opens_its_publication_in_words_and_charges_nothing(downloads):
    uid = published(LOGISTIC, "logistic")
    before = charged()
    at = report({"release": uid})
    shown = text(at)
    assert "Read back from the privacy ledger" in shown and "charges nothing" in shown
    assert "n = 6,000, d = 3" in shown  # the publication's own data, not the loaded data's (n = 2,000)
    assert "The private estimate of the coefficient of x1" in shown
    assert ("multiplies the odds" in shown) == (fitted(uid))  # an odds ratio only for a range of the fitted coefficient
    assert f"release={uid}" in shown  # its address, on its face
    assert "Privacy: whether any one" in shown  # the budget of everything the page prints, in words
    assert charged() == before
    assert at.query_params["release"] == uid  # the link keeps its address (ui.params.sync_url)
    assert not any(m.label.startswith("Released value") and "2,000" in m.value for m in at.metric)
    assert f"release={uid}" in downloads["text/html"][1].decode()  # the exports carry the address
    assert json.loads(downloads["application/json"][1])["address"].endswith(f"release={uid}")


def test_a_publication_of_other_people_is_never_worded_as_the_loaded_datas():
    """Read by its address while the session names census data, a synthetic publication's privacy unit speaks of "the
    data", not of census data (the document names its own data)."""
    uid = published(ROBUST, "robust")
    shown = text(report({"release": uid}, source="acs"))
    assert "per row of the data;" in shown and "census data" not in shown
    assert "n = 4,000, d = 3" in shown


@pytest.mark.parametrize("wanted", ["0" * 32, "not-an-address'<script>", "A" * 32])
def test_an_address_that_names_no_publication_gets_one_sentence_and_the_index(wanted):
    uid = published(ROBUST, "robust")
    at = report({"release": wanted})
    (warning,) = at.warning
    assert warning.value.startswith("This server has published nothing at the address")
    assert "<script>" not in text(at).replace(warning.value, "")  # quoted once, in the sentence, as text
    assert not at.metric  # never another release's document
    assert f"?release={uid}" in text(at)  # the index instead


def test_a_bare_report_lists_every_publication_by_people_newest_first_in_words():
    first = published(ROBUST, "robust", 0)
    second = published(LOGISTIC, "logistic", 2)
    table = published_table(LOGISTIC)
    shown = text(report())
    assert "Nothing has been published on these people yet" in shown  # the loaded data's people
    assert "Everything this server has published" in shown
    assert shown.index(f"release={table}") < shown.index(f"release={second}")  # newest first, by people
    assert shown.index(f"release={second}") < shown.index(f"release={first}")
    line = next(li for li in shown.splitlines() if f"release={second}" in li)
    assert "x2" in line and re.search(r"The private estimate of the coefficient of x2 is -?\d", line)
    odds = re.search(r"odds ratio [\d.e+-]+ \([\d.e+-]+ to [\d.e+-]+\)", line)  # the logistic loss's natural scale
    assert bool(odds) == fitted(second)  # where the range is the fitted coefficient's
    assert "A regression table: x0 " in shown


def test_a_published_table_reads_in_words_with_odds_ratios_and_its_total_cost():
    published(LOGISTIC, "logistic", 1)  # an earlier release on the same people: the table's page prints both
    uid = published_table(LOGISTIC)
    at = report({"release": uid})
    shown = text(at)
    assert "Private estimates of 2 coefficients" in shown and "odds" in shown
    assert re.search(r"x0: -?[\d.]+, range -?[\d.e+-]+ to -?[\d.e+-]+ \(the range (above 0|below 0|includes 0)", shown)
    assert "everything in it is (16, 2e-06)-differentially private" in shown


def test_certificates_bought_first_are_named_in_the_ledger_by_their_coefficient():
    problem = prepare_spec(ROBUST.load(), ModelSpec("robust").resolve(ROBUST.d), ROBUST)
    plan = ReleasePlan(data=ROBUST, model=problem.model, target=2, name="x2", budget=make_budget(8.0, 1e-6))
    waiting = charge_and_certify(plan, problem, open_ledger(), spender=CURATOR)
    _, entry = charge_and_finish(plan, problem, open_ledger(), waiting.certification.uid, spender=CURATOR)
    shown = text(report({"release": entry.uid}))
    assert re.search(r"x2 · ε = [\d.]+, δ = [\d.e-]+ · certificates, released below \(λ̂min = [\d.e-]+, the test "
                     r"\(14\) (passed|failed)\)", shown)
    assert re.search(r"x2 · ε = [\d.]+, δ = [\d.e-]+ · (released|bottom|fallback)", shown)  # the release event


def test_the_command_line_lists_each_publication_with_its_address_and_words(capsys):
    first, table = published(ROBUST, "robust", 0), published_table(LOGISTIC)
    assert cli_main(["ledger", "publications"]) == 0
    listed = json.loads(capsys.readouterr().out)["publications"]
    assert [p["release"] for p in listed] == [table, first]  # newest first
    assert listed[1]["address"] == f"/report?release={first}" and listed[1]["coefficient"] == "x0"
    assert listed[1]["words"].startswith("The private estimate of the coefficient of x0") or \
        listed[1]["words"].startswith("Nothing was released for x0")
    assert listed[0]["words"].startswith("A regression table: x0 ")


def test_a_tables_words_state_each_row_the_sign_and_the_odds():
    doc = dict(data=dict(loss="logistic", outcome="income above $50,000", groups={"female": ("women", "men")}),
               table=dict(status="released", reason="", interval_note="", level=0.95, row_level=0.975, rows=[
                   dict(name="female", value=-0.3, low=-0.4, high=-0.2), dict(name="age", value=0.1, low=-0.1,
                                                                              high=0.3)]))
    lines = plain_table_summary(doc, 2.0, 1e-6)
    assert lines[0].startswith("Private estimates of 2 coefficients") and "95%" in lines[0]
    assert lines[1].startswith("female: -0.3, range -0.4 to -0.2 (the range below 0).")
    assert "the odds of income above $50,000 for women are 0.741 (range 0.67 to 0.819) times those for men" in lines[1]
    assert "(the range includes 0: sign not settled)" in lines[2]
    assert lines[-1].startswith("Privacy: whether any one person's data") and "ε = 2" in lines[-1]
    doc |= dict(guarantee=dict(epsilon=2.0, delta=1e-6), ledger=dict(history=[
        dict(epsilon=2.0, delta=1e-6), dict(epsilon=3.0, delta=1e-6)]))
    assert "everything in it is (5, 2e-06)-differentially private" in table_guarantee(doc)


def test_a_publication_reads_the_same_after_later_releases_on_its_people(downloads):
    """A permanent address shows the document as it was published, its own budget and words; what its people spent
    later is a dated line apart, never folded into the document."""
    first = published(ROBUST, "robust")
    at = report({"release": first})
    before, page = json.loads(downloads["application/json"][1]), text(at)
    published(ROBUST, "robust")  # later releases on the same people
    published(ROBUST, "robust")
    at = report({"release": first})
    after = json.loads(downloads["application/json"][1])
    assert after == before  # the document, its ledger section included, byte for byte
    now = [c.value for c in at.caption if c.value.startswith("Now (")]
    assert len(now) == 1 and "2 more charges on these people since spent ε = 16" in now[0]
    assert [line for line in text(at).splitlines() if not line.startswith("Now (")] == [
        line for line in page.splitlines() if not line.startswith("Now (")]
    assert "(ε, δ) = (8, 1e-06)-differentially private" in text(at) and "everything in it is" not in text(at)


def test_an_address_in_capitals_or_with_trailing_punctuation_opens_its_publication():
    uid = published(ROBUST, "robust")
    for pasted in (uid.upper(), f"{uid})", f"{uid}.", f" {uid}”"):
        shown = text(report({"release": pasted}))
        assert "Read back from the privacy ledger" in shown and "published nothing" not in shown, pasted


def test_a_bare_report_leads_with_what_was_published():
    published(ROBUST, "robust")  # other people than the loaded data's
    at = report()

    def in_order(node) -> list[str]:  # the main area's texts, top to bottom
        own = [node.value] if isinstance(getattr(node, "value", None), str) else []
        return own + [t for child in getattr(node, "children", {}).values() for t in in_order(child)]

    shown = "\n".join(in_order(at.main))
    assert shown.index("Everything this server has published") < shown.index(
        "Nothing has been published on these people yet")
