"""How every page writes numbers and labels, in one place.

num, fixed, percent and interval write values (three significant digits in presentation mode), md escapes text for
Streamlit markdown, tagged and label badge what is computed from the data without privacy, noise_source names
where a run's noise came from, markdown_table writes a small table as Markdown, data_table shows a table of numbers
(as Markdown in presentation mode), and metric_row lays (label, value, help) metrics side by side.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.privacy.gaussian import certainty, posterior_bound
from core.privacy.marks import not_private
from ui.labels import capitalised
from ui.theme import NOT_PRIVATE

Metric = tuple[str, str, str]  # (label, value, help)


def presenting() -> bool:
    """Whether the sidebar's Presentation toggle is on (a display setting: it never changes a draw)."""
    return bool(st.session_state.get("present", False))


def num(x: float | None, digits: int = 6) -> str:
    """`digits` significant digits, three in presentation mode (trailing zeros kept: 0.150, so that the digits of a
    projected interval line up); a dash for a value that was not formed (None or NaN, null in a report)."""
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return three(x) if presenting() else f"{x:.{digits}g}"


def fixed(x: float, places: int) -> str:
    """x to `places` decimals, or to num's three significant digits in presentation mode."""
    return three(x) if presenting() else f"{x:.{places}f}"


def three(x: float) -> str:
    """Three significant digits, trailing zeros kept (0.150, 1.00e-06) but not a bare point: 100, not "100."."""
    return re.sub(r"\.(?=e|$)", "", f"{x:#.3g}")


def percent(share: float, decimals: int = 1, sep: str = "") -> str:
    """A share (0.8808) as a percentage with `decimals` decimals, as Python's % format writes it ("88.1%"), or with
    num's three significant digits in presentation mode ("88.1%", "100%", "0.500%"); sep goes before the sign."""
    return f"{fixed(100 * share, decimals)}{sep}%"


def certainty_words(epsilon: float) -> str:
    """How sure an attacker who starts 50 % sure may end (core.privacy.gaussian.certainty), with three significant
    digits in presentation mode; never rounded up to a certainty it is not (past 99.995 % the words say "all but 1
    in …")."""
    p = posterior_bound(epsilon)
    return percent(p, 2, " ") if presenting() and 100 * p < 99.995 else certainty(epsilon)


def interval(bounds: tuple[float, float] | list[float] | None) -> str:
    """[lo, hi] with num's digits; a dash for no interval (⊥)."""
    return "—" if bounds is None else f"[{num(bounds[0])}, {num(bounds[1])}]"


def released_what(coefficient: str) -> str:
    """A ledger entry's coefficient in words: one name as it is; a regression table's names (joined by commas, as
    core.plan records them) as its size and first names."""
    names = coefficient.split(",")
    if len(names) == 1:
        return coefficient
    shown = ", ".join(names[:2]) + (", …" if len(names) > 2 else "")
    return f"a table of {len(names)} coefficients ({shown})"


def md(text: str) -> str:
    """Text shown literally in Streamlit markdown (θ* must not start italics, $ must not start maths)."""
    return re.sub(r"([\\*_`$\[\]<>~|#])", r"\\\1", text)


def markdown_table(frame: pd.DataFrame) -> str:
    """A small table as Markdown text: drawn by the markdown element every page already loads, where st.table makes a
    new browser fetch about ten more front-end files (its Arrow reader), a cost each new session pays."""
    head = " | ".join(md(str(c)) for c in frame.columns)
    rows = "\n".join("| " + " | ".join(md(str(v)) for v in row) + " |" for row in frame.itertuples(index=False))
    return f"| {head} |\n|{'---|' * len(frame.columns)}\n{rows}"


def sentence(text: str) -> str:
    """text as a sentence: a capital first letter (ui.labels.capitalised: "ε = 8 …" stays as is) and a full stop."""
    return capitalised(text) + ("" if text.endswith(".") else ".")


def tagged(text: str) -> str:
    """text with the "not private" badge."""
    return f"{text} {NOT_PRIVATE}"


def helped(text: str) -> str:
    """A metric label marked not private in plain words: a help button is named for screen readers after its label
    as written, so a badge's markup there would be read out ("Help for κ :orange-badge[…]")."""
    return f"{text} · not private"


def label(result: object, field: str, text: str) -> str:
    """A metric label, marked (`helped`) when core marks result.field as computed from the data without privacy."""
    return helped(text) if field in not_private(result) else text


def noise_source(seed: int | None, fresh: str = "fresh noise from OS entropy") -> str:
    """Where a run's noise came from: a replayable seed, or (in the words `fresh`) the operating system."""
    return fresh if seed is None else f"noise seed {seed} (replayable)"


# Container widths (px) from which each of an SVG figure's drawings shows in presentation mode (ui.charts.sketch): a
# ladder of ratio BAND_STEP from the Pipeline's cards beside a sidebar on a 1280-pixel screen (about 790 px).
BAND_STEP = 1.25
FIGURE_BANDS = tuple(round(750 * BAND_STEP**k) for k in range(5))


def band_rules(bands: tuple[int, ...] = FIGURE_BANDS) -> str:
    """CSS that shows, of a figure's drawings (svg.psp-band-k in a .psp-fit), only the one made for the width of the
    container it is in (a container query); the first serves every narrower container too."""
    rules = [".psp-fit { container-type: inline-size; }", ".psp-fit > svg { display: none !important; }"]
    for k, low in enumerate(bands):
        width = [f"(min-width: {low}px)"] if k else []
        width += [f"(max-width: {bands[k + 1] - 0.02:g}px)"] if k + 1 < len(bands) else []
        shown = f".psp-fit > svg.psp-band-{k} {{ display: block !important; }}"
        rules.append(f"@container {' and '.join(width)} {{ {shown} }}")
    return "\n".join(rules)


# Body text, captions and tables at 1.15rem, a table too wide for the page scrolling sideways in its place; a data
# grid is a canvas at the theme's size, out of CSS's reach (data_table draws a Markdown table instead).
PRESENTATION_CSS = f"""<style>
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li {{ font-size: 1.15rem; }}
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p {{ font-size: 1.15rem; }}
[data-testid="stMarkdownContainer"] :is(td, th), [data-testid="stTable"] :is(td, th) {{ font-size: 1.15rem; }}
[data-testid="stMarkdownContainer"] table {{ display: block; overflow-x: auto; }}
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p {{ font-size: 3.2rem; }}
{band_rules()}
</style>"""


# The dark theme's primary colour, sky blue, holds white text at 2.3:1 only: its buttons' text is the dark background's
# colour instead (8.2:1). The light theme's blue holds white at 5.1:1 and keeps it.
DARK_PRIMARY_CSS = """<style>
[data-testid="stBaseButton-primary"], [data-testid="stBaseButton-primary"] p,
[data-testid="stMultiSelectTagsContainer"] span span { color: #0E1117 !important; }
</style>"""


def presentation_style() -> None:
    """Larger numbers and text in presentation mode (for a projector); dark text on the dark theme's primary
    buttons and chosen options (a multiselect's tags), which are sky blue (WCAG AA contrast)."""
    if presenting():
        st.html(PRESENTATION_CSS)
    if st.context.theme.type == "dark":
        st.html(DARK_PRIMARY_CSS)


LONG_TABLE = 25  # rows: a longer Markdown table scrolls in a box, as a data grid does
TABLE_HEIGHT = 600  # px, that box's height


def data_table(frame: pd.DataFrame, **grid: Any) -> None:
    """A table of numbers: st.dataframe(frame, **grid), or in presentation mode a Markdown table at the body text's
    size, its numbers with num's three digits. A data grid draws on a canvas in the theme's font size, which no page
    style reaches: st.dataframe sets a row height but no font size, and a Styler only colours and formats its cells
    there."""
    if not presenting():
        st.dataframe(frame, **grid)
        return
    if not grid.get("hide_index") and not isinstance(frame.index, pd.RangeIndex):  # an index of names: a column
        frame = frame.reset_index(names=[""])
    text = markdown_table(frame.map(cell))
    if len(frame) > LONG_TABLE:
        st.container(height=TABLE_HEIGHT).markdown(text)
    else:
        st.markdown(text)


def cell(value: object) -> str:
    """A table's cell as text: a number with num's digits (a count as it is), yes or no, a dash for nothing."""
    if value is None:
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    if isinstance(value, float | np.floating):
        return num(float(value))
    return str(value)


def metric_row(items: list[Metric], gap: str = "medium") -> None:
    """(label, value, help) metrics side by side, wrapping on narrow screens."""
    with st.container(horizontal=True, gap=gap):
        for text, value, help_text in items:
            st.metric(text, value, help=help_text, width="content")


def opened(label: str, key: str, icon: str | None = None) -> DeltaGenerator | None:
    """A closed expander whose content is drawn only once it is opened (None until then): its widgets, charts,
    formulas or computations cost nothing at first render. Opening it reruns the fragment it is in, or the page."""
    box = st.expander(label, key=key, on_change="rerun", icon=icon)
    return box if box.open else None
