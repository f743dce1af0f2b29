"""Publications in a real browser: releases published from the command line are listed on a bare /report, in words
with odds ratios; each permanent address opens its document in a fresh browser with no data loaded; printed, the page
drops the sidebar and the buttons. Screenshots go to test-artifacts/ as in test_browser."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from test_browser import (  # noqa: F401
    ROOT,
    check_clean,
    executable,
    new_tab,
    screenshot,
    serve,
    settle,
    text,
)

from core.cli import main

pytestmark = pytest.mark.browser  # a real browser: the full lane only

PUMS = ROOT / "tests" / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"


def cli(*args: str, ledger: Path) -> str:
    """The command line's main, in this process (the setup of these tests; tests/test_pipeline.py and others run it
    as a command): what it printed."""
    out = io.StringIO()
    with mock.patch.dict(os.environ, {"PSP_LEDGER": str(ledger)}), contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


@pytest.fixture
def published(executable: str, tmp_path) -> Iterator[tuple[str, list[dict]]]:  # noqa: F811
    """A server whose ledger holds a census release and a synthetic table, both published from the command line:
    (its URL, `ledger publications`' list, newest first)."""
    ledger = tmp_path / "ledger.sqlite3"
    cli("ledger", "set-cap", "--default", "--epsilon", "20", "--delta", "1e-4", ledger=ledger)
    cli("release", "--pums", str(PUMS), "--coordinate", "female", "--epsilon", "4", "--delta", "1e-6", "--ledger",
        ledger=ledger)
    cli("release", "--synthetic", "--loss", "logistic", "--n", "20000", "--d", "3", "--coordinates", "x0,x2",
        "--epsilon", "4", "--delta", "1e-6", "--ledger", ledger=ledger)
    listed = json.loads(cli("ledger", "publications", ledger=ledger))["publications"]
    with serve("streamlit-publications.log", ledger=ledger) as url:
        yield url, listed


def test_a_manager_finds_every_publication_and_opens_each_by_its_address(browser, published):  # noqa: F811
    server, listed = published
    table, census = listed
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/report")  # a bare link, as a manager is given it
        settle(tab)
        text(tab, "Everything this server has published").wait_for()
        links = [tab.locator(f'a[href$="release={p["release"]}"]') for p in (table, census)]
        for link in links:  # the list is drawn after its heading: read it once both entries are on screen
            link.wait_for()
        index = tab.locator('[data-testid="stMainBlockContainer"]').inner_text()
        assert "female" in index and "A regression table: x0 " in index
        assert all(p["words"][:40] in index for p in (table, census))  # each with its first sentence
        assert all(link.count() == 1 for link in links)
        check_clean(tab, "60-report-index")
    finally:
        tab.close()

    tab = new_tab(browser)  # a fresh browser context: no session, no data
    try:
        tab.goto(f"{server}{census['address']}")
        settle(tab)
        text(tab, "Read back from the privacy ledger").wait_for()
        shown = tab.locator('[data-testid="stMain"]').inner_text()
        assert "The private estimate of the coefficient of female" in shown
        if "ridge-regularised" in census["words"]:  # no curvature certified on this draw: the ridge fit's range
            assert "is for the coefficient of a ridge-regularised fit" in shown and "the odds of" not in shown
        else:
            assert "the odds of earning over $40,000 for women are" in shown  # odds ratios, in words
        assert "Privacy: whether any one person's data" in shown
        sidebar = tab.locator('section[data-testid="stSidebar"]').inner_text()
        assert "Reading a publication" in sidebar and "n = " not in sidebar  # no data loaded for it
        assert f"release={census['release']}" in tab.url  # the address stays in the link
        check_clean(tab, "61-report-permanent-address")

        tab.emulate_media(media="print")  # printed, the page is the document
        assert tab.locator('section[data-testid="stSidebar"]').is_hidden()
        assert all(b.is_hidden() for b in tab.locator(".stDownloadButton").all())
        screenshot(tab, "62-report-printed")

        tab.goto(f"{server}{table['address']}")
        settle(tab)
        text(tab, "Private estimates of 2 coefficients").wait_for()
        assert ("multiplies the odds" in tab.locator('[data-testid="stMain"]').inner_text()) == (
            "odds ratio" in table["words"])  # for the rows whose range is the fitted coefficient's
        check_clean(tab, "63-report-permanent-address-table")
    finally:
        tab.close()
