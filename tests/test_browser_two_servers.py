"""Two app servers behind one PostgreSQL ledger, as a department's deployment runs them: two students, one on each
server, press Release on the same people at once, with room under the cap for one release only. Exactly one is
charged; the other page says the release was refused, and a reload on either server shows what is left.

A real PostgreSQL server (tests/pg.py's pgserver) and two real Streamlit servers (`serve`, each a process of its
own), driven in Chromium.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from pg import databases, pg_server  # noqa: F401  fixtures (skips this file, saying why, without PostgreSQL)
from test_browser import N, executable, new_tab, serve, settle, text  # noqa: F401

from core.data.spec import SyntheticSpec
from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

CAP, EPSILON = 10.0, 8.0  # room for one release of ε = 8 only
LINK = f"/pipeline?mode=publish&epsilon={EPSILON:g}&n={N}"
RELEASE = re.compile(r"Release \(spends")
POPULATION = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()


@pytest.fixture
def two_servers(executable, databases, monkeypatch) -> Iterator[tuple[str, str, str]]:  # noqa: F811
    """(server A's URL, server B's URL, the ledger's URL): two servers on one new PostgreSQL database."""
    url = databases()
    monkeypatch.setenv("PSP_CAP_EPSILON", f"{CAP:g}")
    with serve("streamlit-pg-a.log", ledger=url) as a, serve("streamlit-pg-b.log", ledger=url) as b:
        yield a, b, url


def test_two_servers_racing_for_the_last_epsilon_charge_exactly_once(browser, two_servers):  # noqa: F811
    a, b, url = two_servers
    tabs = [new_tab(browser), new_tab(browser)]
    try:
        for tab, server in zip(tabs, (a, b), strict=True):
            tab.goto(server + LINK)
            settle(tab)
            text(tab, "Nothing released yet").wait_for()
        buttons = [tab.get_by_role("button", name=RELEASE) for tab in tabs]
        assert all(button.is_enabled() for button in buttons)  # each page, loaded before any spend, may release
        for button in buttons:  # both clicks sent before either server has answered
            button.click(no_wait_after=True)
        for tab in tabs:
            settle(tab)
        entries = open_ledger(url).entries(POPULATION)
        assert [e.epsilon for e in entries] == [pytest.approx(EPSILON)]  # exactly one release charged
        # The charging page shows its release on the run its charge starts (st.rerun), which may end after settle.
        for _ in range(600):
            released = [tab.get_by_text("The last release on these data").count() > 0 for tab in tabs]
            if any(released):
                break
            tabs[0].wait_for_timeout(100)
        assert sorted(released) == [False, True], released  # one page shows its release
        other = tabs[released.index(False)]
        other.get_by_text(re.compile(r"refused|release is off", re.IGNORECASE)).first.wait_for()  # and one says why
        assert not other.get_by_text("The last release on these data").count()
        for tab in tabs:  # either server, reloaded, reads the same ledger: Release is off for both
            tab.reload()
            settle(tab)
            text(tab, r"Release is off").wait_for()
        assert [e.epsilon for e in open_ledger(url).entries(POPULATION)] == [pytest.approx(EPSILON)]
    finally:
        for tab in tabs:
            tab.close()
