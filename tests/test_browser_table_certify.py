"""A regression table certified first in a real browser: the certificates only are charged, the preview forecasts
every row and survives a reload, and Release the table spends the rest from those certificates, once; where the
preview says the rows will be narrow, the widest released row lies within a factor of 2 of its forecast.

Publish mode on the Pipeline page, synthetic logistic data (n = 20,000, d = 3, ‖θ*‖ = 4, where the fallback's proven
curvature intervals are likely at ε = 4). The server has a ledger file of its own, read back here; the released
table's document is read from the ledger too. Screenshots go to test-artifacts/ as in test_browser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import check_clean, executable, new_tab, serve, settle, text  # noqa: F401

from core.data.spec import SyntheticSpec
from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

N = 20_000
LINK = f"/pipeline?mode=publish&source=synthetic_logistic&n={N}&d=3&theta_norm=4&epsilon=4"
CARD = "Table certified, not yet released"
CERTIFY = re.compile(r"Certify the table first")
RELEASE = re.compile(r"Release the table")


@pytest.fixture
def table_server(executable: str, tmp_path) -> Iterator[tuple[str, Path]]:  # noqa: F811
    ledger = tmp_path / "ledger.sqlite3"
    with serve("streamlit-table-certify.log", ledger=ledger) as url:
        yield url, ledger


def entries(ledger: Path) -> list:
    return list(open_ledger(ledger).entries(SyntheticSpec("logistic", N, 3, 4.0, 1.0, 0).population()))


def test_a_table_is_certified_first_previewed_row_by_row_and_released_once(browser, table_server):  # noqa: F811
    server, ledger = table_server
    tab = new_tab(browser)
    try:
        tab.goto(server + LINK)
        settle(tab)
        certify = tab.get_by_role("button", name=CERTIFY)
        certify.scroll_into_view_if_needed()
        certify.click()
        settle(tab)
        tab.get_by_text(CARD, exact=True).wait_for()
        assert [e.epsilon for e in entries(ledger)] == [pytest.approx(0.4)]  # 5 % + 5 % of ε = 4
        tab.reload()
        settle(tab)
        card = tab.get_by_text(CARD, exact=True)
        card.wait_for()
        card.scroll_into_view_if_needed()
        rows = tab.locator("table").filter(has_text="Likely half-width")
        rows.wait_for()
        body = rows.inner_text()
        assert all(name in body for name in ("x0", "x1", "x2")), body
        likely = [float(x) for x in re.findall(r"±([0-9.]+(?:e-?\d+)?)", body)]
        said = tab.locator('[data-testid="stMain"]').inner_text()
        chance = re.search(r"is about (\d+)%", said[said.index(CARD):])  # the table's preview, after its title
        check_clean(tab, "40-pipeline-table-certified")
        release = tab.get_by_role("button", name=RELEASE)
        assert "spends the rest" in release.inner_text() and tab.get_by_role("button", name=CERTIFY).is_disabled()
        release.click()
        settle(tab)
        text(tab, "One release of 3 coefficients").wait_for()
        charged = entries(ledger)
        assert [e.epsilon for e in charged] == pytest.approx([0.4, 3.6])  # the whole budget, charged once
        assert not tab.get_by_text(CARD, exact=True).count()
        check_clean(tab, "41-pipeline-table-released")
        document = json.loads(charged[-1].details.document)
        widest = max(r["half_width"] for r in document["table"]["rows"])
        if chance is not None and int(chance.group(1)) >= 95:  # where the preview says the rows will be narrow
            low, high = min(likely), max(likely)
            assert low / 2 <= widest <= 2 * high, (widest, likely)
    finally:
        tab.close()
