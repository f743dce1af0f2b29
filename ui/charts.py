"""How every page draws a figure: a Plotly figure of ui.figures in the app's theme, with its title on the exported
PNG, or an SVG figure of ui.svg; each described in words below it for readers who cannot see it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import plotly.graph_objects as go
import streamlit as st

from ui.figures import alt_text, themed
from ui.format import md, presenting
from ui.svg import PRESENTING_WIDTH, WIDTH, Sketch

PRESENTING_FONT = 18  # px, against Plotly's 12: the SVG figures' text grows about as much (WIDTH / PRESENTING_WIDTH)


def chart(fig: go.Figure, key: str, height: int | None = None, top: int = 30, restyle: bool = True) -> None:
    """A plotly chart in the app's theme (its text larger in presentation mode), described in words below it
    (ui.figures.alt_text); its toolbar downloads a PNG named after the key, with the figure's title. restyle: the
    cards' layout (legend below, tight margins, height or the figure's own); False keeps the figure's layout."""
    fig = themed(fig, st.context.theme.type)
    if presenting():
        enlarge(fig)
    if restyle:  # the legend goes below the plot: above it, the toolbar would cover its right end
        fig.update_layout(height=height or fig.layout.height or 300, margin=dict(l=10, r=10, t=top, b=10),
                          legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0.0))
    st.plotly_chart(fig, key=key, config={"toImageButtonOptions": {"format": "png", "filename": key, "scale": 2}})
    st.caption(md(alt_text(fig)))


def enlarge(fig: go.Figure, size: int = PRESENTING_FONT) -> None:
    """Text for a room: Streamlit's chart theme sets the axes' and the legend's fonts itself, so each is set here
    (a figure's own settings win over a theme's)."""
    fig.update_layout(font_size=size, title_font_size=size + 2, legend_font_size=size)
    fig.update_xaxes(tickfont_size=size, title_font_size=size)
    fig.update_yaxes(tickfont_size=size, title_font_size=size)
    fig.update_annotations(font_size=size)


def sketch(key: str, draw: Callable[..., Sketch], *args: object, share: float = 1.0) -> None:
    """An SVG figure of ui.svg, draw(*args, width=...), drawn narrower in presentation mode so that its text is
    scaled up with it, and narrower by `share` in a column of that share of the page, so that its text keeps its
    size; described in words below it, and downloadable as an SVG file named after the key (written only when
    asked for)."""
    s = draw(*args, width=round(share * (PRESENTING_WIDTH if presenting() else WIDTH)))
    st.markdown(s.html(), unsafe_allow_html=True)
    st.caption(md(s.alt))
    st.download_button("Figure (SVG)", partial(s.svg, standalone=True), f"{key}.svg", "image/svg+xml",
                       key=f"{key}_svg", on_click="ignore", type="tertiary", icon=":material/download:",
                       help="This figure as an SVG file, with its title, for slides or a report")
