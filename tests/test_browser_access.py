"""Who may spend, in a real browser, on a publish-only server (PSP_PUBLISH_ONLY=1) with a ledger file of its own.

Without analysts, the browser (even on the server's own machine) is a reader whatever its link says: one sentence
where the spending controls were, and nothing charged. With an analyst, a fresh tab reads until it signs in; a wrong
key is refused; the right key spends within the analyst's share and no further; a revocation from another process
ends the open session. The key never reaches the page's HTML, its address or the server's log. Screenshots and the
server's log go to test-artifacts/ as in test_browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from test_browser import (  # noqa: F401
    ARTIFACTS,
    N,
    check_clean,
    executable,
    link_drops,
    new_tab,
    open_page,
    serve,
    settle,
    text,
)

from core.data.spec import SyntheticSpec
from core.privacy.charge import open_charged
from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

LINK = f"/pipeline?epsilon=4&n={N}"
CAP = (10.0, 1e-5)
SHARE = (6.0, 1e-5)
SPENDING = re.compile(r"Release \(spends|Release the table|Certify first")  # not a help button's "Released value"
RELEASE = re.compile(r"Release \(spends")
TABLE = re.compile(r"Release the table")
READING = "You are reading"
RELEASED = "The last release on these data"


@contextmanager
def publish_only(monkeypatch, ledger: Path, log_name: str) -> Iterator[str]:
    """A fresh server locked to publish mode (serve passes this process's environment on), charging `ledger`."""
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    with serve(log_name, ledger=ledger) as url:
        yield url


def charges(ledger: Path) -> list[tuple[str, float]]:
    """(spender, ε) of every charge on the default synthetic data (n = N), oldest first."""
    population = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()
    return [(e.spender, e.epsilon) for e in open_ledger(ledger).entries(population)]


def enabled_spending(tab) -> list[str]:
    """The names of the spending buttons on the page that are on."""
    buttons = tab.get_by_role("button", name=SPENDING)
    return [b.inner_text() for b in buttons.all() if b.is_enabled()]


def sidebar(tab):
    return tab.locator('[data-testid="stSidebar"]')


def pipeline_drawn(tab) -> None:
    """Wait for the Pipeline's publish section and its table's (always drawn) button."""
    settle(tab)
    tab.get_by_role("button", name=TABLE).wait_for()


def sign_in(tab, key: str) -> None:
    field = sidebar(tab).get_by_label("Analyst access key", exact=True)
    field.fill(key)
    sidebar(tab).get_by_role("button", name=re.compile(r"Sign in$")).click()
    settle(tab)


def test_without_analysts_every_browser_reads_and_nothing_is_charged(browser, tmp_path, monkeypatch):  # noqa: F811
    ledger = tmp_path / "ledger.sqlite3"
    with publish_only(monkeypatch, ledger, "streamlit-access-reader.log") as server:
        tab = new_tab(browser)
        try:
            for link in (LINK, LINK + "&mode=teaching&noise_seed=3&analyst=ana"):
                tab.goto(server + link)
                pipeline_drawn(tab)
                text(tab, READING).wait_for()  # publish mode, whatever the link says
                text(tab, "nobody may spend this budget from this app").wait_for()
                sidebar(tab).get_by_text("only the curator's command line publishes").wait_for()
                assert not sidebar(tab).get_by_label("Analyst access key", exact=True).count()  # no one to sign in as
                assert tab.get_by_role("button", name=TABLE).is_disabled()
                assert enabled_spending(tab) == []
                link_drops(tab, "mode=teaching")
                check_clean(tab, "40-access-reader")
                assert charges(ledger) == []

            open_page(tab, server, "Report", "report")
            check_clean(tab, "41-access-reader-report")
            assert charges(ledger) == []
        finally:
            tab.close()


def test_an_analyst_signs_in_spends_their_share_and_a_revocation_ends_it(browser, tmp_path, monkeypatch):  # noqa: F811
    ledger = tmp_path / "ledger.sqlite3"
    key = open_charged(ledger, CAP).add_analyst("ana", SHARE)  # by the curator, before the server starts
    assert key
    wrong = key[:-1] + ("x" if key[-1] != "x" else "y")
    log_name = "streamlit-access-analyst.log"

    def no_key(tab) -> None:
        assert key not in tab.content()
        assert key not in tab.url

    with publish_only(monkeypatch, ledger, log_name) as server:
        tab = new_tab(browser)
        try:
            # 1. A fresh tab reads: the sign-in is in the sidebar, the controls are one sentence.
            tab.goto(server + LINK)
            pipeline_drawn(tab)
            text(tab, "Sign in with the key").wait_for()
            sidebar(tab).get_by_label("Analyst access key", exact=True).wait_for()
            assert enabled_spending(tab) == []
            check_clean(tab, "42-access-analyst-reader")

            # 2. A wrong key: refused, still a reader.
            sign_in(tab, wrong)
            sidebar(tab).get_by_text(re.compile("That access key is not valid")).wait_for()
            pipeline_drawn(tab)
            text(tab, READING).wait_for()
            assert enabled_spending(tab) == []
            assert wrong not in tab.content() and wrong not in tab.url
            assert sidebar(tab).get_by_label("Analyst access key", exact=True).input_value() == ""  # form cleared
            assert charges(ledger) == []

            # 3. The right key: an analyst, with the controls.
            sign_in(tab, key)
            sidebar(tab).get_by_text(re.compile(r"Analyst.*ana, within the share")).wait_for()
            sidebar(tab).get_by_role("button", name=re.compile("Sign out")).wait_for()
            release = tab.get_by_role("button", name=RELEASE)
            release.wait_for()
            tab.get_by_role("button", name=re.compile("Certify first")).wait_for()
            assert release.is_enabled()
            assert not tab.get_by_text(READING).count()
            no_key(tab)
            check_clean(tab, "43-access-analyst-signed-in")

            # 4. Release at ε = 4: one charge, to ana.
            release.click()
            settle(tab)
            text(tab, RELEASED).wait_for()
            assert charges(ledger) == [("ana", pytest.approx(4.0))]
            no_key(tab)

            # 5. 4 + 4 > 6: past the share, Release is off before any click.
            notice = text(tab, r"^Release is off")
            notice.wait_for()
            assert "your share" in notice.inner_text(), notice.inner_text()
            release = tab.get_by_role("button", name=RELEASE)
            assert release.is_disabled()
            assert enabled_spending(tab) == []
            no_key(tab)
            check_clean(tab, "44-access-analyst-share-spent")

            # 6. ε = 2 fits the share's rest: Release is on again in the same session.
            slider = tab.locator('[data-testid="stSlider"]').filter(has_text="ε").get_by_role("slider").first
            for _ in range(3):  # 4 → 3.15 → 2.5 → 2 on the log grid
                slider.press("ArrowLeft")
                settle(tab)
            tab.wait_for_function("() => /[?&]epsilon=2(&|$)/.test(location.search)")
            release = tab.get_by_role("button", name=RELEASE)
            release.wait_for()
            tab.wait_for_function(
                "() => [...document.querySelectorAll('button')].some(b => /Release \\(spends/.test(b.innerText)"
                " && !b.disabled)")
            no_key(tab)

            # 7. The curator revokes ana from another process; the page drawn before it: its click spends nothing.
            open_ledger(ledger).revoke_analyst("ana")
            release.click()
            settle(tab)
            text(tab, READING).wait_for()
            assert enabled_spending(tab) == []
            assert charges(ledger) == [("ana", pytest.approx(4.0))]
            no_key(tab)
            check_clean(tab, "45-access-analyst-revoked")

            # 8. A reload: still a reader, nothing more charged, and no sign-in left in the sidebar.
            tab.reload()
            pipeline_drawn(tab)
            text(tab, READING).wait_for()
            sidebar(tab).get_by_text("only the curator's command line publishes").wait_for()  # ana was the only one
            assert not sidebar(tab).get_by_role("button", name=re.compile("Sign out")).count()
            assert enabled_spending(tab) == []
            assert charges(ledger) == [("ana", pytest.approx(4.0))]
            no_key(tab)
        finally:
            tab.close()
    log = (ARTIFACTS / log_name).read_text()
    assert key not in log
    assert key.split("-", 2)[-1] not in log  # nor its secret part
    assert wrong not in log
