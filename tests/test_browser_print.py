"""The Report printed from the browser (Ctrl+P on the page itself, not the downloaded HTML): a single release's page
prints with its technical appendix open, a table's with its forest plot across the page, and neither wastes a page.

A server with a ledger of its own; one release and one table published in publish mode on synthetic logistic data;
each publication's permanent address printed by Chromium to an A4 PDF, its pages counted and its text read (the
helpers of tests/test_browser_export). PDFs go to test-artifacts/.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, executable, new_tab, serve, settle, text  # noqa: F401
from test_browser_export import _objects, _stream, pdf_pages, pdf_text

from core.privacy.ledger_store import open_ledger

pytestmark = pytest.mark.browser  # a real browser: the full lane only

DATA = "source=synthetic_logistic&n=20000&d=3&mode=publish"
A4_PRINTABLE = 718  # px: A4's 210 mm less Chromium's default 10 mm margins, at 96 dpi


@pytest.fixture
def print_server(executable: str, tmp_path) -> Iterator[tuple[str, Path]]:  # noqa: F811
    ledger = tmp_path / "ledger.sqlite3"
    with serve("streamlit-print.log", ledger=ledger) as url:
        yield url, ledger


def publish(tab, server: str, button: str) -> None:
    tab.goto(f"{server}/pipeline?{DATA}")
    settle(tab)
    tab.get_by_role("button", name=re.compile(button)).first.click()
    settle(tab)


def drawn(tab) -> None:
    """Wait until the page has drawn what its run sent: a first load's run can end before its metrics are laid out,
    and a PDF taken then prints them as empty boxes. So: every metric laid out, and the number of elements and the
    page's height unchanged over two looks 200 ms apart."""
    settle(tab)
    tab.wait_for_function("Array.from(document.querySelectorAll('[data-testid=stMetric]'))"
                          ".every(m => m.getBoundingClientRect().width > 24)")
    look = ("document.querySelectorAll('[data-testid=stElementContainer]').length + ':' + "
            "document.querySelector('[data-testid=stMain]').scrollHeight")
    before = None
    while (now := tab.evaluate(look)) != before:
        before = now
        tab.wait_for_timeout(200)


def printed(tab, name: str) -> tuple[int, str, bytes]:
    drawn(tab)
    tab.emulate_media(media="print")
    data = tab.pdf(format="A4", print_background=True)
    (ARTIFACTS / f"{name}.pdf").write_bytes(data)
    return pdf_pages(data), unicodedata.normalize("NFKC", pdf_text(data)), data




def glyphs_per_page(data: bytes) -> list[int]:
    """How many text-drawing operators (Tj, TJ) each page draws, in its content stream and in the forms (XObjects) it
    draws, which Chromium uses for some blocks of text: 0 is a blank page."""
    objects = _objects(data)
    pages = [body for body in objects.values() if re.search(rb"/Type\s*/Page(?![a-zA-Z])", body)]
    return [_glyphs(objects, p, int(re.search(rb"/Contents (\d+) 0 R", p).group(1)), set()) for p in pages]


def _glyphs(objects: dict[int, bytes], resources: bytes, content: int, seen: set[int]) -> int:
    """Tj and TJ in object `content`'s stream and in every form its resources name, each form counted once."""
    seen.add(content)
    own = len(re.findall(rb"T[jJ]", _stream(objects[content])))
    names = re.search(rb"/XObject\s*<<(.*?)>>", resources, re.S)
    forms = [int(k) for k in re.findall(rb"/\w+\s+(\d+) 0 R", names.group(1))] if names else []
    return own + sum(_glyphs(objects, objects[k], k, seen) for k in forms
                     if k not in seen and b"/Subtype /Form" in objects[k])


def test_a_release_prints_with_its_appendix_open_and_a_table_with_its_plot_across(browser, print_server):  # noqa: F811
    server, ledger = print_server
    tab = new_tab(browser)
    try:
        publish(tab, server, r"^Release \(spends")
        publish(tab, server, r"^Release the table")
        publications = open_ledger(ledger).publications()
        assert len(publications) == 2
        table, single = publications  # newest first
        tab.goto(f"{server}/report?release={single.uid}")
        settle(tab)
        text(tab, "Technical appendix").wait_for()
        text(tab, "^Released value").wait_for()  # the first screen's metrics, not only the appendix's expander
        pages, words, data = printed(tab, "70-report-printed")
        assert "Released value" in words, words[:1500]
        assert "What the guarantee rests on" in words, words[:1500]  # the appendix, open on paper
        assert "by this machine's browser" in words and 1 <= pages <= 3, pages  # the ledger's row, at the end
        assert min(glyphs_per_page(data)) > 0, glyphs_per_page(data)  # no blank page
        tab.emulate_media(media="screen")
        tab.goto(f"{server}/report?release={table.uid}")
        settle(tab)
        text(tab, "Private estimates of 3 coefficients").wait_for()
        tab.locator(".psp-figure svg").first.wait_for(state="attached")  # the forest plot drawn, then printed
        tab.emulate_media(media="print")
        tab.wait_for_function("Array.from(document.querySelectorAll('.psp-figure svg'))"
                              ".some(s => s.getBoundingClientRect().width > 0)")
        width = tab.evaluate("Math.max(...Array.from(document.querySelectorAll('.psp-figure svg'))"
                             ".map(s => s.getBoundingClientRect().width))")
        pages, words, data = printed(tab, "71-report-table-printed")
        assert width >= 0.9 * A4_PRINTABLE, width  # the forest plot across the printed page
        assert all(name in words for name in ("x0", "x1", "x2")) and "by this machine's browser" in words
        assert 1 <= pages <= 2 and min(glyphs_per_page(data)) > 0, (pages, glyphs_per_page(data))
    finally:
        tab.close()
