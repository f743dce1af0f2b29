"""How every page writes numbers and labels, in one place.

num and interval write values (fewer digits in presentation mode), md escapes text for Streamlit
markdown, tagged and label badge what is computed from the data without privacy, noise_source names
where a run's noise came from, markdown_table writes a small table as Markdown, and metric_row lays (label,
value, help) metrics side by side.
"""

from __future__ import annotations

import math
import re

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.privacy.marks import not_private
from ui.labels import capitalised
from ui.theme import NOT_PRIVATE

Metric = tuple[str, str, str]  # (label, value, help)


def presenting() -> bool:
    """Whether the sidebar's Presentation toggle is on (a display setting: it never changes a draw)."""
    return bool(st.session_state.get("present", False))


def num(x: float | None) -> str:
    """Six significant digits, three in presentation mode (trailing zeros kept: 0.150, so that the digits of a
    projected interval line up); a dash for a value that was not formed (None or NaN, null in a report)."""
    if x is None or math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:#.3g}" if presenting() else f"{x:.6g}"


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


PRESENTATION_CSS = """<style>
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1.15rem; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1.15rem; }
[data-testid="stMetricValue"], [data-testid="stMetricValue"] p { font-size: 3.2rem; }
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
