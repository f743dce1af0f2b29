"""Exports in a real browser: the Pipeline's script prints the value on the page, its figures download as SVG, and
the Report prints to PDF.

The server, Chromium and the helpers are test_browser's; screenshots and the PDF go to test-artifacts/.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest
from test_browser import (  # noqa: F401
    ARTIFACTS,
    ROOT,
    check_clean,
    executable,
    metric_value,
    new_tab,
    open_page,
    server,
    settle,
    text,
)

pytestmark = pytest.mark.browser  # a real browser: the full lane only

# The link's settings (ui.params.PARAMS): seeded teaching noise, and data on which (14) passes at ε = 8.
LINK = "pipeline?noise_seed=7&n=20000&epsilon=8"
MAX_PAGES = 3  # the Report on A4 with one ledger entry takes 2 pages
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"  # a charge's time as the Report shows it
# The lines each table header holding a charge's time takes at A4's printable width (182 mm at 96 dpi).
STAMP_LINES = """() => {
    document.body.style.width = '688px';
    return [...document.querySelectorAll('th')].filter(th => /^\\d{4}-/.test(th.textContent)).map(th => {
        const range = document.createRange();
        range.selectNodeContents(th);
        return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
    });
}"""


def run_script(path: Path) -> dict[str, str]:
    """The downloaded script run as a colleague would, from its own folder with the repository on PYTHONPATH."""
    done = subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines())


def download(tab, label: str, folder: Path) -> Path:
    """Click the download button whose label ends with label; the file, saved under its suggested name."""
    button = tab.locator('[data-testid="stDownloadButton"]').filter(has_text=re.compile(rf"{re.escape(label)}\s*$"))
    with tab.expect_download() as info:
        button.first.click()
    path = folder / info.value.suggested_filename
    info.value.save_as(path)
    return path


def test_the_downloaded_script_prints_the_value_on_the_page(browser, server: str, tmp_path):  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/{LINK}")
        settle(tab)
        text(tab, "Stage 4").wait_for()
        shown = metric_value(tab, "Released value")
        assert re.fullmatch(r"-?\d\.\d+(e[-+]\d+)?", shown), shown  # a released value, not ⊥
        path = download(tab, "Reproduce: Python script", tmp_path)
        assert path.name == "reproduce_x0.py"
        settle(tab)
        assert metric_value(tab, "Released value") == shown  # the click drew no fresh noise
        printed = run_script(path)
        assert f"{float(printed['value']):.6g}" == shown
        notebook = download(tab, "Reproduce: Jupyter notebook", tmp_path)
        assert notebook.suffix == ".ipynb" and '"nbformat": 4' in notebook.read_text()
        figure = download(tab, "Figure (SVG)", tmp_path)  # the first: the fit's, written only on the click
        assert figure.name == "theta.svg"
        root = ET.fromstring(figure.read_text())
        assert root.find("{http://www.w3.org/2000/svg}title").text.startswith("The fit θ(Pn)")
        assert "background:#FFFFFF" in root.get("style")  # the light theme's colours, whatever the page's
        check_clean(tab, "40-export-pipeline")
    finally:
        tab.close()


# ---------------------------------------------------------------- the Report on paper


def pdf_pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def _objects(data: bytes) -> dict[int, bytes]:
    return {int(n): body for n, body in re.findall(rb"(\d+) 0 obj\s*(.*?)endobj", data, re.S)}


def _stream(body: bytes) -> bytes:
    """An object's stream: the /Length bytes after the stream keyword's end of line (compressed data may itself
    end in a carriage return), or up to endstream when the length is not given directly."""
    start = re.search(rb"stream\r?\n", body)
    if start is None:
        return b""
    length = re.search(rb"/Length (\d+)(?!\s+\d+\s+R)", body[:start.start()])
    rest = body[start.end():]
    raw = rest[:int(length.group(1))] if length else re.search(rb"(.*?)\r?\nendstream", rest, re.S).group(1)
    return zlib.decompress(raw) if b"/FlateDecode" in body else raw


def _cmap(stream: bytes) -> dict[int, str]:
    """A ToUnicode CMap: glyph id -> text (bfchar and bfrange entries)."""
    def utf16(h: bytes) -> str:
        return bytes.fromhex(h.decode()).decode("utf-16-be")

    out = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", stream, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = utf16(dst)
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", stream, re.S):
        for lo, hi, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            for k in range(int(lo, 16), int(hi, 16) + 1):
                out[k] = chr(int(dst, 16) + k - int(lo, 16))
    return out


def pdf_text(data: bytes) -> str:
    """The text Chromium's PDF draws: each content stream's glyph strings, decoded by their font's ToUnicode map,
    text objects separated by spaces and whitespace collapsed (enough to find phrases, not a layout)."""
    objects = _objects(data)
    fonts = {}
    for name, ref in re.findall(rb"/(F\d+) (\d+) 0 R", data):
        to_unicode = re.search(rb"/ToUnicode (\d+) 0 R", objects.get(int(ref), b""))
        if to_unicode:
            fonts[name] = _cmap(_stream(objects[int(to_unicode.group(1))]))
    parts = []
    for body in objects.values():
        content = _stream(body) if b"/FlateDecode" in body else b""
        if b"\nBT\n" not in content:  # a font file or an image, not a page's drawing
            continue
        font: dict[int, str] = {}
        for kind, value, _ in re.findall(rb"/(F\d+) [\d.]+ Tf|<([0-9A-Fa-f]+)>|(ET)", content):
            if kind:
                font = fonts.get(kind, {})
            elif value:
                parts.append("".join(font.get(int(value[i:i + 4], 16), "") for i in range(0, len(value), 4)))
            else:
                parts.append(" ")
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", "".join(parts)))  # NFKC: ligatures such as "ﬃ"


def test_the_report_prints_to_a_short_clean_pdf(browser, server: str, tmp_path):  # noqa: F811
    """Publish a release, download the Report's HTML and its script; Chromium prints the HTML to a PDF of a few
    pages holding the released value, the guarantee and the interval's scope."""
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/pipeline?n=20000&epsilon=8&mode=publish")
        settle(tab)
        text(tab, "Nothing released yet").wait_for()
        tab.get_by_role("button", name=re.compile(r"Release \(spends")).click()
        settle(tab)
        released = metric_value(tab, "Released value")
        open_page(tab, server, "Report", "report")
        assert metric_value(tab, "Released value") == released
        text(tab, "The private estimate of the coefficient of x0").wait_for()  # the first screen, in words
        tab.get_by_text("Technical appendix", exact=False).first.click()
        text(tab, "not a confidence interval for a population coefficient").wait_for()
        check_clean(tab, "41-export-report")
        script = download(tab, "Script of these settings", tmp_path).read_text()
        assert "SEED = None" in script and "FRESH noise from the operating system" in script
        html = download(tab, "Download HTML report", tmp_path).read_text()
        (ARTIFACTS / "41-export-report.html").write_text(html)
    finally:
        tab.close()

    paper = new_tab(browser)
    try:
        paper.set_content(html)
        paper.emulate_media(media="print")
        style = paper.evaluate("""() => {
            const s = (q, p) => getComputedStyle(document.querySelector(q)).getPropertyValue(p);
            return {card: s('.card', 'break-inside'), result: s('.result', 'break-inside'),
                    shade: s('.guarantee', 'background-color'), heading: s('h2', 'color'),
                    appendix: s('h2.appendix', 'break-before')};
        }""")
        assert style == dict(card="avoid", result="avoid", shade="rgb(255, 255, 255)", heading="rgb(0, 0, 0)",
                             appendix="page")
        assert paper.evaluate(STAMP_LINES) == [1]  # the ledger's one charge: its time on one line, on A4
        data = paper.pdf(format="A4", print_background=True)
    finally:
        paper.close()
    (ARTIFACTS / "41-export-report.pdf").write_bytes(data)
    pages = pdf_pages(data)
    assert 1 <= pages <= MAX_PAGES, pages
    printed = pdf_text(data)
    assert len(re.findall(STAMP, printed)) == 1, printed  # the charge's time, whole
    for phrase in ("Private release of one regression coefficient", released, "differentially private",
                   "not a confidence interval for a population coefficient", "Privacy ledger"):
        assert unicodedata.normalize("NFKC", phrase) in printed, (phrase, printed[:2000])
    # The first page after the data's label (everything before the appendix, which starts a new page) is words,
    # not formulas.
    first = printed[printed.index("Released value of"):printed.index("Technical appendix")]
    assert "The private estimate of the coefficient of x0" in first and "Privacy:" in first
    for formula in ("uᵀ", "θ", "λ", "(14)", "(15)", "Lemma", "^T"):
        assert unicodedata.normalize("NFKC", formula) not in first, (formula, first)


def test_a_published_table_reaches_the_report_and_its_pdf(browser, server: str, tmp_path):  # noqa: F811
    """A regression table released in publish mode (one charge) is the Report's subject: its rows and its forest
    plot on the page, and in the downloaded HTML printed by Chromium."""
    tab = new_tab(browser)
    try:
        tab.goto(f"{server}/pipeline?source=synthetic_logistic&n=50000&d=3&mode=publish")
        settle(tab)
        tab.get_by_role("button", name="Release the table (spends ε, δ)").click()
        settle(tab)
        open_page(tab, server, "Report", "report")
        text(tab, "Read back from the privacy ledger: a regression table on").wait_for()
        assert tab.locator('[data-testid="stMain"] svg[role="img"]').first.get_attribute("aria-label").startswith(
            "Regression table: 3 coefficients, one release")
        check_clean(tab, "43-export-table-report")
        html = download(tab, "Download HTML report", tmp_path).read_text()
    finally:
        tab.close()
    paper = new_tab(browser)
    try:
        paper.set_content(html)
        data = paper.pdf(format="A4", print_background=True)
    finally:
        paper.close()
    (ARTIFACTS / "43-export-table-report.pdf").write_bytes(data)
    printed = unicodedata.normalize("NFKC", pdf_text(data))
    for phrase in ("Private regression table", "x0", "x1", "x2", "differentially private, for the whole table",
                   "Regression table: 3 coefficients, one release", "a table of 3 coefficients (x0, x1, …) · ε = 4"):
        assert unicodedata.normalize("NFKC", phrase) in printed, (phrase, printed[:1500])
    assert 1 <= pdf_pages(data) <= MAX_PAGES
