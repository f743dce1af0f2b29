"""A reader's link on a real publish-only server: asking for a SYNTHETIC census sample writes nothing, says why in
one sentence and names no server path; the menu lists only the pages that work there.

The server's cache ($XDG_CACHE_HOME) and data folder ($XDG_DATA_HOME) are the test's own; the browser, on the
server's machine, is a reader there (publish-only: nobody spends, or writes, without signing in). Screenshots and the
server's log go to test-artifacts/ as in test_browser.
"""

from __future__ import annotations

import pytest
from test_browser import new_tab, screenshot, serve, settle

from ui.loaded import WRITES_REFUSED

pytestmark = pytest.mark.browser  # a real browser: the full lane only


def test_a_readers_census_sample_link_writes_nothing_on_a_publish_only_server(browser, tmp_path, monkeypatch):
    cache, data = tmp_path / "cache", tmp_path / "data"
    cache.mkdir()
    data.mkdir()
    for name, value in (("PSP_PUBLISH_ONLY", "1"), ("XDG_CACHE_HOME", str(cache)), ("XDG_DATA_HOME", str(data))):
        monkeypatch.setenv(name, value)  # serve() hands the environment to the server
    with serve("streamlit-reader.log", ledger=tmp_path / "ledger.sqlite3") as url:
        monkeypatch.undo()  # the server's folders only: Chromium, started before, keeps its own elsewhere
        tab = new_tab(browser)
        try:
            tab.goto(f"{url}/data?source=acs&census_sample=1234&states=WY,VT")
            settle(tab)
            tab.locator('[data-testid="stAlertContentError"]').get_by_text(WRITES_REFUSED).wait_for()
            screenshot(tab, "reader-census-sample")
            page = tab.locator("body").inner_text()
            assert str(tmp_path) not in page and "private-single-parameter" not in page
            assert tab.get_by_role("button", name="Make a SYNTHETIC census sample").is_disabled()
            menu = tab.locator('[data-testid="stSidebarNav"]').inner_text()  # only what works here is listed
            assert "Report" in menu and "Compare" not in menu and "Attacker" not in menu
            tab.goto(f"{url}/compare")  # a closed page keeps its address and says why
            settle(tab)
            tab.get_by_text("teaching mode only").first.wait_for()
        finally:
            tab.close()
    assert not list(cache.rglob("*")) and not list(data.rglob("*"))
