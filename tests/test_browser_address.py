"""A publication's permanent address reads the same after later releases on its people, in a real browser: only the
dated line apart from the document ("Now (…), apart from the document: …") tells what was spent since.

A server with a ledger of its own; release A at ε = 4 in publish mode, its address read in a fresh tab; release B at
ε = 2 on the same people; A's address read again in another fresh tab: every word of the document is as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import check_clean, executable, new_tab, serve, settle, text  # noqa: F401

from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

DATA = "source=synthetic_logistic&n=20000&d=3&mode=publish"
NOW = re.compile(r"Now \([^)]*\), apart from the document: [^\n]*")


@pytest.fixture
def address_server(executable: str, tmp_path) -> Iterator[tuple[str, Path]]:  # noqa: F811
    ledger = tmp_path / "ledger.sqlite3"
    with serve("streamlit-address.log", ledger=ledger) as url:
        yield url, ledger


def publish(browser, server: str, epsilon: float) -> None:  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/pipeline?{DATA}&epsilon={epsilon:g}")
        settle(tab)
        tab.get_by_role("button", name=re.compile(r"^Release \(spends")).click()
        settle(tab)
        text(tab, "The last release on these data").wait_for()
    finally:
        tab.close()


def read(browser, server: str, uid: str, name: str) -> tuple[str, str]:  # noqa: F811
    """The document's words at its address in a fresh tab, and the dated line apart from it."""
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/report?release={uid}")
        settle(tab)
        text(tab, "apart from the document").wait_for()
        check_clean(tab, name)
        words = tab.locator('[data-testid="stMain"]').inner_text()
    finally:
        tab.close()
    (now,) = NOW.findall(words)
    return NOW.sub("", words), now


def test_a_permanent_address_reads_the_same_after_later_releases(browser, address_server):  # noqa: F811
    server, ledger = address_server
    publish(browser, server, 4.0)
    (first,) = open_ledger(ledger).publications()
    before, now_before = read(browser, server, first.uid, "80-address-before")
    publish(browser, server, 2.0)
    assert len(open_ledger(ledger).publications()) == 2
    after, now_after = read(browser, server, first.uid, "81-address-after")
    assert after == before  # the document, word for word
    assert "a factor of 54.6 (ε = 4)" in after and "ε = 8" not in after.split("Technical appendix")[0]
    assert "nothing more has been charged on these people since" in now_before
    assert "1 more charge on these people since spent ε = 2" in now_after
