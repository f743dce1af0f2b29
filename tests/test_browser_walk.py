"""Every page in Chromium, in the light theme and in the dark theme in presentation mode, each page checked at
1280×720 and again at 1920×1080 (or the other way round), with every expander opened and the buttons that draw
figures pressed: no exception, no error, no traceback; every figure (Plotly or SVG) has a title and, below it, a
description that starts with that title and names what it draws; no chart's title, axis title or legend overlaps
another or is cut off by the figure's edge, and no two labels of an SVG figure overlap; in presentation mode,
captions and tables' cells are at least the size of the body text (and no data grid, whose canvas keeps its small
text, is shown), a diagram's labels at least 16 px, every SVG and Plotly figure's text at least 18 px as rendered,
and no metric, paragraph or caption writes a number to more than three significant digits; every text and every
enabled button's text has a contrast of at least 4.5:1 against what it is drawn on (3:1 for large text, WCAG AA), in
both themes.

The two walks (this module's light one, tests/test_browser_walk_dark.py's dark one, so that they run side by side)
cover both themes, both sizes and both modes of presentation between them: a page's layout is checked again after
the window is resized, which reruns nothing on the server (the theme and the mode act independently, in
ui.figures.themed and ui.format)."""

from __future__ import annotations

import re

import pytest
from test_browser import N, check_clean, new_tab, server, settle  # noqa: F401

pytestmark = pytest.mark.browser  # a real browser: the full lane only

SMALL, LARGE = (1280, 720), (1920, 1080)
WALKS = [("light", (SMALL, LARGE), False), ("dark", (LARGE, SMALL), True)]
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
    '[data-testid="stPlotlyChart"], [data-testid="stMarkdownContainer"] svg[role="img"]'))
  .filter(el => el.getClientRects().length).map(el => {  // shown: of a figure's drawings, the one for its width
  const box = el.closest('[data-testid="stElementContainer"]');
  const next = box ? box.nextElementSibling : null;
  const title = el.querySelector('.gtitle') || el.querySelector('title');
  return [title ? title.textContent : '', next ? next.innerText : ''];
})"""
SIZES = """() => ['[data-testid="stCaptionContainer"]', '[data-testid="stMarkdownContainer"] p'].map(
  s => parseFloat(getComputedStyle(document.querySelector('[data-testid="stMain"] ' + s)).fontSize))"""


CONTRASTS = """() => {
  const rgba = c => { const v = (c.match(/[\\d.]+/g) || ['0', '0', '0', '0']).map(Number);
                      return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const over = (top, bottom) => top.slice(0, 3).map((x, i) => x * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  const lum = c => c.slice(0, 3).map(x => x / 255)
    .map(x => x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4))
    .reduce((sum, x, i) => sum + [0.2126, 0.7152, 0.0722][i] * x, 0);
  const paint = e => {  // what an element paints behind text: an HTML background, an SVG shape's fill
    const st = getComputedStyle(e);
    if (!(e instanceof SVGElement)) return rgba(st.backgroundColor);
    if (!['rect', 'path', 'circle', 'ellipse', 'polygon'].includes(e.tagName) || st.fill === 'none') {
      return [0, 0, 0, 0];  // a group, text or the <svg> itself paints nothing of its own
    }
    const c = rgba(st.fill);
    return [c[0], c[1], c[2], c[3] * parseFloat(st.fillOpacity) * parseFloat(st.opacity)];
  };
  const page = rgba(getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor);
  const composite = layers => layers.reverse().reduce((below, c) => over(c, below), page);
  const ground = el => {  // the colour under el's centre: every layer painted there (above the page), composited
    const r = el.getBoundingClientRect();
    const stack = document.elementsFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    const layers = [];
    for (const e of stack.length ? stack : []) {
      if (e !== el && el.contains(e)) continue;
      // HTML text sits on its ancestors' backgrounds, never on a neighbour that happens to lie under its centre (a
      // slider's thumb under its value); an SVG text sits on the shapes drawn before it, its siblings.
      if (!(el instanceof SVGElement) && !e.contains(el)) continue;
      const c = paint(e);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) return composite(layers); }
    }
    if (stack.length) return composite(layers);
    for (let e = el; e; e = e.parentElement) {  // off screen: its own and its ancestors' backgrounds
      const c = paint(e);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return composite(layers);
  };
  const out = [];
  const roots = document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"]');
  for (const root of roots) for (const el of root.querySelectorAll('*')) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    if (el.closest('[disabled], [aria-disabled="true"], svg title, .katex-mathml')) continue;  // inactive, unseen
    const style = getComputedStyle(el);
    if (style.visibility !== 'visible') continue;
    const bg = ground(el);
    const fg = over(rgba(el instanceof SVGElement ? style.fill : style.color), bg);
    const ratio = (Math.max(lum(fg), lum(bg)) + 0.05) / (Math.min(lum(fg), lum(bg)) + 0.05);
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    // An icon is a graphic (WCAG's non-text contrast, 3:1), as is large text.
    const large = size >= 24 || (bold && size >= 18.66) || el.closest('[data-testid="stIconMaterial"]');
    if (ratio < (large ? 3 : 4.5)) out.push([el.textContent.trim().slice(0, 60), ratio,
                                             el instanceof SVGElement ? style.fill : style.color, bg.join()]);
  }
  return out;
}"""  # WCAG's contrast ratio of every visible text (HTML and SVG) against the composited colour behind it

OVERLAPS = """() => {
  const box = el => el.getBoundingClientRect();
  const meet = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2
    && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1
    && a.bottom <= b.bottom + 1;
  const out = [];
  for (const chart of document.querySelectorAll('.js-plotly-plot')) {
    const frame = box(chart.querySelector('.main-svg'));
    const parts = ['.gtitle', '.g-xtitle', '.g-ytitle', '.legend'].map(s => [s, chart.querySelector(s)])
      .filter(([, el]) => el && el.getBBox().width > 0);
    const name = (chart.querySelector('.gtitle') || {}).textContent || '?';
    for (const [s, el] of parts) if (!inside(box(el), frame)) out.push(`${name}: ${s} is cut off`);
    for (let i = 0; i < parts.length; i++) for (let j = i + 1; j < parts.length; j++)
      if (meet(box(parts[i][1]), box(parts[j][1]))) out.push(`${name}: ${parts[i][0]} overlaps ${parts[j][0]}`);
  }
  for (const svg of document.querySelectorAll('.psp-figure svg')) {
    const frame = box(svg), name = (svg.querySelector('title') || {}).textContent || '?';
    const texts = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent.trim());
    for (const t of texts) if (!inside(box(t), frame)) out.push(`${name}: "${t.textContent}" is cut off`);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++)
      if (meet(box(texts[i]), box(texts[j])))
        out.push(`${name}: "${texts[i].textContent}" overlaps "${texts[j].textContent}"`);
  }
  return out;
}"""  # a chart's titles and legend apart and inside it; an SVG figure's labels apart and inside it


DIAGRAM_TEXT = """() => Array.from(document.querySelectorAll('[data-testid="stGraphVizChart"] svg text'))
  .map(t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a)"""  # each label's rendered size, in px

# Every shown text of the figures, [rendered px, text, figure]: an SVG figure's text at its font size times its
# drawing's scale on screen (turned text too: the matrix's length), a Plotly text at its computed size. A sub- or
# superscript (a tspan at 70-75 % of its text, as typeset) is part of its text and not measured apart.
FIGURE_TEXT = """() => {
  const scale = t => { const m = t.getScreenCTM(); return Math.hypot(m.a, m.b); };
  const name = (t, root, sel) => ((t.closest(root) || document).querySelector(sel) || {}).textContent || '?';
  const shown = t => t.getClientRects().length && t.textContent.trim();
  const svg = Array.from(document.querySelectorAll('.psp-figure svg text')).filter(shown)
    .map(t => [parseFloat(t.getAttribute('font-size')) * scale(t), t.textContent, name(t, 'svg', 'title')]);
  const plotly = Array.from(document.querySelectorAll('.js-plotly-plot .main-svg text')).filter(shown)
    .map(t => [parseFloat(getComputedStyle(t).fontSize) * scale(t), t.textContent,
               name(t, '.js-plotly-plot', '.gtitle')]);
  return svg.concat(plotly);
}"""
FIGURE_PX = 18  # a figure's text in presentation mode: the size a room reads (ui.charts.PRESENTING_FONT)

# The tables' cells and the body text's size; how many data grids are shown (a canvas, at the theme's own size).
TABLES = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const body = parseFloat(getComputedStyle(main.querySelector('[data-testid="stMarkdownContainer"] p')).fontSize);
  const cells = Array.from(main.querySelectorAll('table td, table th')).filter(c => c.getClientRects().length)
    .map(c => [parseFloat(getComputedStyle(c).fontSize), c.textContent.trim()]);
  const grids = Array.from(main.querySelectorAll('[data-testid="stDataFrame"]')).filter(g => g.getClientRects().length);
  return [body, cells, grids.length];
}"""

# The main area's shown metric values, paragraphs, list items and captions, without their code (commands, file names,
# values as typed), the widgets' own text (labels, options, a slider's value and ends: inputs, written as the user
# chose them) and the cells of tables (st.table writes its cells as Markdown paragraphs; TABLES checks their size).
TEXTS = """() => Array.from(document.querySelector('[data-testid="stMain"]').querySelectorAll(
    '[data-testid="stMetricValue"], [data-testid="stCaptionContainer"], [data-testid="stMarkdownContainer"] p, '
    + '[data-testid="stMarkdownContainer"] li'))
  .filter(el => el.getClientRects().length)
  .filter(el => !el.closest('label, table, [role="radiogroup"], [data-testid="stWidgetLabel"], '
                            + '[data-testid="stSlider"]'))
  .map(el => { const copy = el.cloneNode(true); copy.querySelectorAll('code').forEach(c => c.remove());
               return copy.textContent; })"""
# A number written with a decimal point or an exponent (0.233637, 88.08, 3.3516e-08, 1e-06), not inside a word (x0,
# fig1): integers (2026, 20,000, counts) are exact and may have any number of digits.
DECIMAL = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+(?:e[−+-]?\d+)?|e[−+-]?\d+)", re.IGNORECASE)
URL = re.compile(r"\S+://\S+")


def significant(number: str) -> int:
    """The significant digits of a decimal number as written: 0.0500 has 3, 88.08 has 4, 1.00e-06 has 3."""
    return len(number.lower().split("e")[0].replace(",", "").replace(".", "").lstrip("0"))


def too_precise(text: str) -> list[str]:
    """The numbers of text written to more than three significant digits (URLs left out)."""
    return [m for m in DECIMAL.findall(URL.sub(" ", text)) if significant(m) > 3]


def open_expanders(tab) -> None:
    """Open every expander, those inside opened ones too (a content drawn once opened reruns the page)."""
    closed = tab.locator('[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary')
    for _ in range(4):
        if not closed.count():
            return
        closed.evaluate_all("all => all.forEach(s => s.click())")  # at once: Streamlit folds their reruns into one
        settle(tab)
    assert not closed.count(), f"{closed.count()} expanders still closed after four rounds of opening"


def plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u200b", "")).strip()


DRAWN = {"pipeline": 3, "compare": 1, "attacker": 5, "planner": 1, "data": 1, "experiments": 1}  # figures at least
LAYOUT = """() => [document.querySelector('[data-testid="stMain"]').scrollHeight, ...Array.from(
  document.querySelectorAll('.js-plotly-plot .main-svg, .psp-figure svg')).map(s => s.getBoundingClientRect().width)]
  .join()"""


def laid_out(tab) -> None:
    """Wait until the page's height and every figure's width have held still over three looks 150 ms apart (a chart
    is drawn again at a new width a moment after the window's change), at most 6 s."""
    before, still = None, 0
    for _ in range(40):
        now = tab.evaluate(LAYOUT)
        still = still + 1 if now == before else 0
        if still == 2:
            return
        before = now
        tab.wait_for_timeout(150)


def check_figures(tab, name: str) -> int:
    """Every figure's title and description; the viewport grows to the page so that every chart is laid out."""
    width = tab.viewport_size["width"]
    height = tab.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": width, "height": min(max(height, 720), 12_000)})
    laid_out(tab)
    figures = tab.evaluate(FIGURES)
    for title, caption in figures:
        title, caption = plain(title), plain(caption)
        assert title, f"{name}: a figure without a title (described as {caption[:80]!r})"
        head = title.split(" · ")[0][:30]
        assert caption.startswith(head), f"{name}: {title!r} is described as {caption[:80]!r}"
        assert "Shown:" in caption or "shown:" in caption, f"{name}: {caption[:120]!r} names nothing drawn"
    return len(figures)


def check_layout(tab, name: str, present: bool) -> None:
    """Text contrast, chart titles apart and whole, and in presentation mode the text sizes, as laid out now."""
    faint = [f"{text!r} at {ratio:.2f}:1 ({color} on rgb({ground}))" for text, ratio, color, ground in
             tab.evaluate(CONTRASTS)]
    assert not faint, f"{name}: text under WCAG AA's contrast (4.5:1, large text 3:1): {faint[:6]}"
    clashes = tab.evaluate(OVERLAPS)
    assert not clashes, f"{name}: {clashes[:5]}"
    if present:
        caption, body = tab.evaluate(SIZES)
        assert caption >= body, f"{name}: captions {caption} px under body text {body} px"
        diagram = tab.evaluate(DIAGRAM_TEXT)
        assert min(diagram, default=16) >= 16, f"{name}: diagram text at {min(diagram):.1f} px (under 16)"
        small = [f"{text!r} at {px:.1f} px in {figure!r}" for px, text, figure in tab.evaluate(FIGURE_TEXT)
                 if px < FIGURE_PX - 0.01]
        assert not small, f"{name}: figure text under {FIGURE_PX} px: {small[:6]}"
        body, cells, grids = tab.evaluate(TABLES)
        assert not grids, f"{name}: {grids} data grid(s), whose canvas keeps the theme's small text"
        smaller = [f"{text!r} at {px} px" for px, text in cells if px < body]
        assert not smaller, f"{name}: table text under the body's {body} px: {smaller[:6]}"
        precise = [(numbers, text[:100]) for text in tab.evaluate(TEXTS) if (numbers := too_precise(text))]
        assert not precise, f"{name}: numbers with more than three significant digits: {precise[:6]}"


def test_every_page_every_figure_light(browser, server: str):  # noqa: F811
    walk(browser, server, *WALKS[0])


def walk(browser, server: str, scheme: str, sizes, present: bool) -> None:  # noqa: F811
    """One walk of the module docstring: every page in `scheme` at the first of `sizes`, then at the second."""
    (width, height), second = sizes
    tab = new_tab(browser, viewport={"width": width, "height": height}, color_scheme=scheme)
    query = f"?n={N}&trials=3" + ("&present=1" if present else "")
    drawn = {}
    try:
        for path, heading in PAGES:
            name = f"walk-{scheme}-{path or 'start'}"
            tab.set_viewport_size({"width": width, "height": height})
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
            if path in DRAWN:  # a run may start a moment after its click: wait for what it draws, then look
                tab.wait_for_function(f"({FIGURES})().length >= {DRAWN[path]}")
            assert "Traceback" not in tab.inner_text("body"), name
            drawn[path] = check_figures(tab, name)
            check_layout(tab, f"{name}-{width}", present)
            check_clean(tab, f"{name}-{width}")
            # The other width: the same page laid out again (no rerun, so no new error can appear; no screenshot).
            check_figures(tab.set_viewport_size({"width": second[0], "height": second[1]}) or tab, name)
            check_layout(tab, f"{name}-{second[0]}", present)
        # The figure-bearing pages drew their figures (a walk that found none would prove nothing).
        assert all(drawn[p] >= k for p, k in DRAWN.items()), str(drawn)
    finally:
        tab.close()
