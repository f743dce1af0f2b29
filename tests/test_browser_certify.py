"""Certify first in a real browser: the certificates bought survive a reload, and Release from them charges the rest.

Publish mode on the Pipeline page: "Certify first" charges the privacy ledger for the certificates only (5 % + 5 %
of ε at the default split), a reload (a new Streamlit session) shows the same preview card and a Release for the
rest, and releasing charges the release event only, so the whole ε = 8 is charged once. The server has a ledger file
of its own, read back here. Screenshots go to test-artifacts/ as in test_browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import N, check_clean, executable, new_tab, serve, settle, text  # noqa: F401

from core.data.spec import SyntheticSpec
from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

LINK = f"/pipeline?mode=publish&epsilon=8&n={N}"
CARD = "Certified, not yet released"
RELEASE = re.compile(r"Release \(spends")
CERTIFY = re.compile(r"Certify first")
RELEASED = "The last release on these data"


@pytest.fixture
def certify_server(executable: str, tmp_path) -> Iterator[tuple[str, Path]]:  # noqa: F811
    """A fresh server whose privacy ledger is a file this test reads: (its URL, the ledger's path)."""
    ledger = tmp_path / "ledger.sqlite3"
    with serve("streamlit-certify.log", ledger=ledger) as url:
        yield url, ledger


def charges(ledger: Path) -> list[float]:
    """The ε of every charge on the default synthetic data (n = N), oldest first."""
    population = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()
    return [e.epsilon for e in open_ledger(ledger).entries(population)]


def card(tab):
    return tab.get_by_text(CARD, exact=True)


def test_certificates_survive_a_reload_and_release_once_for_the_rest(browser, certify_server):  # noqa: F811
    server, ledger = certify_server
    tab = new_tab(browser)
    try:
        # 1. Certify first: the preview card.
        tab.goto(server + LINK)
        settle(tab)
        text(tab, "Nothing released yet").wait_for()  # publish mode, from the link
        assert charges(ledger) == []
        tab.get_by_role("button", name=CERTIFY).click()
        settle(tab)
        card(tab).wait_for()
        check_clean(tab, "30-pipeline-certified")

        # 2. The certificates only were charged.
        assert charges(ledger) == [pytest.approx(0.8)]  # 5 % + 5 % of ε = 8 under the default split

        # 3. A reload is a new session: the ledger brings the card and a Release for the rest back.
        tab.reload()
        settle(tab)
        card(tab).wait_for()
        release = tab.get_by_role("button", name=RELEASE)
        release.wait_for()
        assert "spends the rest" in release.inner_text(), release.inner_text()
        assert "7.2" in release.inner_text(), release.inner_text()
        assert release.is_enabled()
        assert tab.get_by_role("button", name=CERTIFY).is_disabled()  # one set of certificates at a time
        text(tab, r"Releasing spends the rest, ε = 7\.2").wait_for()
        assert charges(ledger) == [pytest.approx(0.8)]  # the reload charged nothing
        check_clean(tab, "31-pipeline-certified-reloaded")
        card(tab).scroll_into_view_if_needed()  # Streamlit scrolls inside its main element, not the page

        # 4. Release: the release event only, from those certificates.
        release.click()
        settle(tab)
        text(tab, RELEASED).wait_for()
        assert charges(ledger) == pytest.approx([0.8, 7.2])
        assert sum(charges(ledger)) == pytest.approx(8.0)  # the whole budget, charged once
        assert not card(tab).count()
        check_clean(tab, "32-pipeline-released-from-certificates")

        # 5. Reload again: nothing waits, and 8 of the cap of 10 is spent, so Release is off.
        tab.reload()
        settle(tab)
        text(tab, r"read back from the privacy ledger").wait_for()  # the paid-for release, at its whole budget
        text(tab, r"Release is off").wait_for()
        release = tab.get_by_role("button", name=RELEASE)
        release.wait_for()
        assert not card(tab).count()
        assert "spends the rest" not in release.inner_text(), release.inner_text()
        assert release.is_disabled()
        assert tab.get_by_role("button", name=CERTIFY).is_disabled()
        assert charges(ledger) == pytest.approx([0.8, 7.2])  # nothing more charged
        check_clean(tab, "33-pipeline-after-release-reloaded")
    finally:
        tab.close()
