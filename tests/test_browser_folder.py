"""A curator's folder on a real server, in Chromium: the Data page shows its size and never its rows or location, a
publish release reads it in blocks and charges its people, a reload keeps what was spent, a link naming a location
is replaced with a notice, and Compare says in one sentence why it cannot run.

The folder is written by the project's own generator; the server is told of it by PSP_FOLDERS, as a deployment is.
"""

from __future__ import annotations

import re

import pytest
from test_browser import check_clean, executable, metric_value, new_tab, serve, settle, text  # noqa: F401

from core.data.synthetic import write_folder
from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

N = 40_000
RELEASE = re.compile(r"Release \(spends")


def test_a_curators_folder_is_released_by_name_and_its_budget_holds_across_a_reload(browser, tmp_path,  # noqa: F811
                                                                                     monkeypatch):
    root = tmp_path / "hidden-location" / "income"
    write_folder(str(root), N, 4, "logistic", theta_norm=2.0, seed=7, file_rows=15_000)
    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("PSP_FOLDERS", f"income={root}")
    monkeypatch.setenv("PSP_CAP_EPSILON", "5")
    with serve("streamlit-folder.log", ledger=ledger) as url:
        tab = new_tab(browser)
        tab.goto(f"{url}/data?source=folder&folder=income")
        settle(tab)
        assert metric_value(tab, "n") == f"{N:,}"
        text(tab, "its rows are not previewed").wait_for()
        assert not tab.locator('[data-testid="stDataFrame"]').count()
        check_clean(tab, "folder-data")

        tab.goto(f"{url}/pipeline?source=folder&folder=income&mode=publish&epsilon=2")
        settle(tab)
        text(tab, "Nothing released yet").wait_for()
        tab.get_by_role("button", name=RELEASE).click()
        settle(tab)
        text(tab, r"spent ε = 2\b").wait_for()
        check_clean(tab, "folder-published")
        assert "hidden-location" not in tab.locator("body").inner_text()
        (entry,) = open_ledger(str(ledger)).publications()
        assert entry.population.describe() == "the rows of the folder income"

        tab.reload()  # a new session of the same link: the ledger, not the session, holds what was spent
        settle(tab)
        text(tab, r"spent ε = 2\b").wait_for()
        assert tab.get_by_role("button", name=RELEASE).is_enabled()  # 2 + 2 <= 5

        tab.goto(f"{url}/data?source=folder&folder={root}")  # a link naming a location: never read
        settle(tab)
        notice = tab.locator('[data-testid="stSidebar"]').inner_text()
        assert "not a folder this server offers" in notice and "hidden-location" not in notice
        assert metric_value(tab, "n") == f"{N:,}"  # the deployment's folder, by its name

        tab.goto(f"{url}/compare?source=folder&folder=income")
        settle(tab)
        tab.locator('[data-testid="stAlertContentError"]').get_by_text("every row in memory").wait_for()
        tab.close()
