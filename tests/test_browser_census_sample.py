"""The census source offline, in a real browser and with no terminal: the Data page makes a SYNTHETIC census sample
in one click, and the Pipeline releases a census coefficient on it, labelled SYNTHETIC.

The server's per-user cache ($XDG_CACHE_HOME) is the test's own, so the sample is made there and nowhere else.
Screenshots and the server's log go to test-artifacts/ as in test_browser.
"""

from __future__ import annotations

import re

import pytest
from test_browser import check_clean, new_tab, serve, settle

pytestmark = pytest.mark.browser  # a real browser: the full lane only

ROWS = 2_000  # about 960 records pass ACSIncome's filter: a sample made in well under a second


def test_data_page_makes_a_synthetic_sample_and_the_pipeline_releases_on_it(browser, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # serve() hands the environment to the server
    sample = tmp_path / "cache" / "private-single-parameter" / "synthetic-acs" / f"rows-{ROWS}"
    with serve("streamlit-census-sample.log") as url:
        tab = new_tab(browser)
        tab.goto(f"{url}/data?source=acs&n=20000")
        settle(tab)
        tab.get_by_text(re.compile(r"No census file for CA in this folder")).wait_for()
        size = tab.get_by_role("spinbutton", name="SYNTHETIC records per state")
        size.fill(str(ROWS))
        size.press("Enter")
        settle(tab)
        tab.get_by_role("button", name="Make a SYNTHETIC census sample").click()
        settle(tab)
        tab.get_by_text("SYNTHETIC census-like data (no real person).").first.wait_for()
        check_clean(tab, "census-sample-data")
        assert re.search(rf"[?&]census_sample={ROWS}(&|$)", tab.url), tab.url  # a reload keeps it
        assert (sample / "2018" / "1-Year" / "psam_p06.csv").is_file()
        # Centred by default; the paper's encoding is one click away and the link keeps it.
        encoding = tab.get_by_role("radiogroup", name="Census encoding")
        assert encoding.get_by_role("radio", name=re.compile("centred")).is_checked()
        tab.get_by_text(re.compile(r"the centred encoding \(each indicator less a public constant")).first.wait_for()
        encoding.get_by_text(re.compile("the paper's")).click()
        settle(tab)
        tab.get_by_text(re.compile(r"the paper's encoding \(indicators in \{0, 1\}")).first.wait_for()
        assert re.search(r"[?&]encoding=paper(&|$)", tab.url), tab.url

        tab.locator('[data-testid="stSidebarNav"] a').filter(has_text=re.compile(r"Pipeline\s*$")).click()
        settle(tab)
        tab.get_by_role("heading", name="Privately releasing one coefficient", level=1).wait_for()
        sidebar = tab.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text(re.compile(r"SYNTHETIC census-like data \(no real person\): 2,000 made-up")).wait_for()
        sidebar.get_by_text("ACS income (a SYNTHETIC census sample: no real person)").wait_for()
        tab.get_by_text(re.compile(r"Released value|released by")).first.wait_for()  # stage 4 drew a value
        check_clean(tab, "census-sample-pipeline")
        tab.close()
