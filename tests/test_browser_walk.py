"""Every page in Chromium, in the light theme at 1280×720 and in the dark theme at 1920×1080 in presentation mode,
with every expander opened and the buttons that draw figures pressed: no exception, no error, no traceback; every
figure (Plotly or SVG) has a title and, below it, a description that starts with that title and names what it
draws; in presentation mode, captions are at least the size of the body text and a diagram's labels at least 16 px;
every enabled primary button's text has a contrast of at least 4.5:1 (WCAG AA) against its colour, in both themes.

The two walks cover both themes, both sizes and both modes of presentation between them (a full cross would take
four times as long for the same code paths: the theme, the size and the mode act independently, in
ui.figures.themed, the browser's layout and ui.format)."""

from __future__ import annotations

import re

import pytest
from test_browser import RUN_TIMEOUT_MS, N, browser, check_clean, executable, server, settle  # noqa: F401

pytestmark = pytest.mark.browser  # a real browser: the full lane only

WALKS = [("light", 1280, 720, False), ("dark", 1920, 1080, True)]
PAGES = [  # (URL path, first heading)
    ("", "Start"), ("data", "Data"), ("pipeline", "Privately releasing one coefficient"),
    ("compare", "Compare methods"), ("attacker", "The attacker's view"),
    ("planner", "Planner"), ("report", "Report"), ("experiments", "Experiments"),
]
BUTTONS = {  # what a page needs pressed before its figures are drawn
    "pipeline": ["Draw a table"],
    "compare": ["Run comparison"],
    "attacker": ["Let the computer play 200 rounds", "Draw the baselines"],
}
FIGURES = """() => Array.from(document.querySelectorAll(
    '[data-testid="stPlotlyChart"], [data-testid="stMarkdownContainer"] svg[role="img"]')).map(el => {
  const box = el.closest('[data-testid="stElementContainer"]');
  const next = box ? box.nextElementSibling : null;
  const title = el.querySelector('.gtitle') || el.querySelector('title');
  return [title ? title.textContent : '', next ? next.innerText : ''];
})"""
SIZES = """() => ['[data-testid="stCaptionContainer"]', '[data-testid="stMarkdownContainer"] p'].map(
  s => parseFloat(getComputedStyle(document.querySelector('[data-testid="stMain"] ' + s)).fontSize))"""


CONTRASTS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stBaseButton-primary"]:not(:disabled)')).map(b => {
  const lum = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number).map(x => x / 255)
    .map(x => x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4))
    .reduce((sum, x, i) => sum + [0.2126, 0.7152, 0.0722][i] * x, 0);
  const text = b.querySelector('p') || b;
  const fg = lum(getComputedStyle(text).color), bg = lum(getComputedStyle(b).backgroundColor);
  return [b.innerText, (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)];
})"""  # WCAG's contrast ratio of each enabled primary button's text against its colour


DIAGRAM_TEXT = """() => Array.from(document.querySelectorAll('[data-testid="stGraphVizChart"] svg text'))
  .map(t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a)"""  # each label's rendered size, in px


def open_expanders(tab) -> None:
    """Open every expander, those inside opened ones too (a content drawn once opened reruns the page)."""
    for _ in range(4):
        closed = tab.locator('[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary')
        if not closed.count():
            return
        for summary in closed.element_handles():  # all at once: Streamlit folds the reruns they ask for into one
            summary.click()
        settle(tab)


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u200b", "")).strip()


def check_figures(tab, name: str) -> int:
    """Every figure's title and description; the viewport grows to the page so that every chart is laid out."""
    width = tab.viewport_size["width"]
    height = tab.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": width, "height": min(max(height, 720), 12_000)})
    tab.wait_for_timeout(1_000)
    figures = tab.evaluate(FIGURES)
    for title, caption in figures:
        title, caption = plain(title), plain(caption)
        assert title, f"{name}: a figure without a title (described as {caption[:80]!r})"
        head = title.split(" · ")[0][:30]
        assert caption.startswith(head), f"{name}: {title!r} is described as {caption[:80]!r}"
        assert "Shown:" in caption or "shown:" in caption, f"{name}: {caption[:120]!r} names nothing drawn"
    return len(figures)


@pytest.mark.parametrize("scheme,width,height,present", WALKS, ids=["light-1280", "dark-1920-presentation"])
def test_every_page_every_figure(browser, server: str, scheme: str, width: int, height: int, present: bool):  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    tab = context.new_page()
    tab.set_default_timeout(RUN_TIMEOUT_MS)
    query = f"?n={N}&trials=3" + ("&present=1" if present else "")
    drawn = {}
    try:
        for path, heading in PAGES:
            name = f"walk-{scheme}-{path or 'start'}"
            tab.goto(f"{server}/{path}{query}")
            settle(tab)
            tab.get_by_role("heading", name=heading, level=1).first.wait_for(timeout=20_000)
            if path == "attacker":
                draws = tab.get_by_label("Draws per data set", exact=True)
                draws.fill("5")
                draws.press("Enter")
                settle(tab)
            for label in BUTTONS.get(path, []):
                tab.get_by_role("button", name=label).click()
                settle(tab)
            open_expanders(tab)
            assert "Traceback" not in tab.inner_text("body"), name
            drawn[path] = check_figures(tab, name)
            for text, ratio in tab.evaluate(CONTRASTS):
                assert ratio >= 4.5, f"{name}: the button {text!r} has a contrast of {ratio:.2f}:1 (WCAG AA: 4.5)"
            if present:
                caption, body = tab.evaluate(SIZES)
                assert caption >= body, f"{name}: captions {caption} px under body text {body} px"
                diagram = tab.evaluate(DIAGRAM_TEXT)
                assert min(diagram, default=16) >= 16, f"{name}: diagram text at {min(diagram):.1f} px (under 16)"
            tab.set_viewport_size({"width": width, "height": height})
            check_clean(tab, name)
        # The figure-bearing pages drew their figures (a walk that found none would prove nothing).
        assert all(drawn[p] >= k for p, k in (("pipeline", 3), ("compare", 1), ("attacker", 5), ("planner", 1),
                                              ("data", 1), ("experiments", 1))), str(drawn)
    finally:
        context.close()
