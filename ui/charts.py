"""How every page draws a figure: a Plotly figure of ui.figures in the app's theme, with its title on the exported
PNG, or an SVG figure of ui.svg; each described in words below it for readers who cannot see it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import plotly.graph_objects as go
import streamlit as st

from ui.figures import TITLE_FONT, TITLE_PAD, alt_text, plain, themed
from ui.format import md, presenting
from ui.svg import CHAR_WIDTH, PRESENTING_WIDTHS, WIDTH, Sketch, fitted

PRESENTING_FONT = 18  # px, against Plotly's 12: the SVG figures' smallest text shows at least as large (ui.svg)
AXIS_FONT = 12  # px, Plotly's axis text
TITLE_ROOM = 520.0  # px a title may take on one line: a chart in half of a 1280-pixel page's main column


def chart(fig: go.Figure, key: str, height: int | None = None, top: int = 44, restyle: bool = True) -> None:
    """A plotly chart in the app's theme (its text larger in presentation mode), described in words below it
    (ui.figures.alt_text); its toolbar downloads a PNG named after the key, with the figure's title. restyle: the
    cards' layout (legend below, tight margins, height or the figure's own); False keeps the figure's layout."""
    fig = themed(fig, st.context.theme.type)
    if presenting():
        enlarge(fig)
    size = PRESENTING_FONT + 2 if presenting() else TITLE_FONT
    extra = fit_title(fig, size) + round(1.3 * (size - TITLE_FONT))  # a larger title needs a taller margin too
    if restyle:  # the legend goes below the plot: above it, the toolbar would cover its right end
        fig.update_layout(height=(height or fig.layout.height or 300) + extra,
                          margin=dict(l=10, r=10, t=top + extra, b=10),
                          legend=dict(orientation="h", yanchor="top", xanchor="left", x=0.0))
    else:  # the figure's own layout, its top margin grown with its title
        fig.update_layout(margin_t=(fig.layout.margin.t or 100) + extra)
    if restyle or (fig.layout.legend.y or 0.0) < 0:  # a legend below the plot
        legend_below(fig, PRESENTING_FONT if presenting() else AXIS_FONT)
    st.plotly_chart(fig, key=key, config={"toImageButtonOptions": {"format": "png", "filename": key, "scale": 2}})
    st.caption(md(alt_text(fig)))


def legend_below(fig: go.Figure, size: float) -> None:
    """The legend below the plot, clear of the x axis's values and title at font `size`: Plotly places it in
    fractions of the plot's height, which the margins and the text's size change."""
    drop = 2.6 * size + 30  # two lines of text (the values, the axis title) and their gaps, in pixels
    rows = 3.0 * size + 6  # up to two rows of keys: Plotly grows the bottom margin to hold them, shrinking the plot
    height, top = fig.layout.height or 450, fig.layout.margin.t or 100
    bottom = max(fig.layout.margin.b or 10, drop + rows)
    fig.update_layout(legend_y=-drop / max(height - top - bottom, 100.0))


def fit_title(fig: go.Figure, size: float, room: float = TITLE_ROOM) -> int:
    """Break a title too long for `room` pixels at `size` onto two lines (Plotly cuts a long title off at the
    figure's edge, and the page's width is not known here); the pixels the second line needs, 0 when none."""
    text = fig.layout.title.text
    if not text or "<br>" in text or CHAR_WIDTH * size * len(plain(text)) <= room:
        return 0
    fits = int(room / (CHAR_WIDTH * size))
    cut = max(text.rfind(" · ", 0, fits), text.rfind(" ", 0, fits))
    # Plotly hangs a title's extra line above its anchor: the pad below the figure's top makes room for it.
    pad = round(size + 6)
    fig.update_layout(title_text=text[:cut] + "<br>" + text[cut:].removeprefix(" · ").strip(), title_pad_t=pad)
    return round(1.3 * size) + max(0, pad - TITLE_PAD)


def enlarge(fig: go.Figure, size: int = PRESENTING_FONT) -> None:
    """Text for a room: Streamlit's chart theme sets the axes' and the legend's fonts itself, so each is set here
    (a figure's own settings win over a theme's)."""
    fig.update_layout(font_size=size, title_font_size=size + 2, legend_font_size=size, legend_title_font_size=size)
    fig.update_xaxes(tickfont_size=size, title_font_size=size)
    fig.update_yaxes(tickfont_size=size, title_font_size=size)
    fig.update_annotations(font_size=size)


def sketch(key: str, draw: Callable[..., Sketch], *args: object, share: float = 1.0) -> None:
    """An SVG figure of ui.svg, draw(*args, width=...), drawn narrower by `share` in a column of that share of the
    page, so that its text keeps its size; in presentation mode drawn once for each band of container widths
    (ui.svg.fitted), so that the page shows the drawing made for its container's real width, its text at 18 px or
    more. Described in words below it, and downloadable as an SVG file of WIDTH pixels named after the key (written
    only when asked for)."""
    if presenting():
        drawings = [draw(*args, width=width) for width in PRESENTING_WIDTHS]
        s, figure = drawings[0], fitted(drawings)
        file = partial(figure_file, draw, *args)
    else:
        s = draw(*args, width=round(share * WIDTH))
        figure, file = s.html(), partial(s.svg, standalone=True)
    st.markdown(figure, unsafe_allow_html=True)
    st.caption(md(s.alt))
    st.download_button("Figure (SVG)", file, f"{key}.svg", "image/svg+xml",
                       key=f"{key}_svg", on_click="ignore", type="tertiary", icon=":material/download:",
                       help="This figure as an SVG file, with its title, for slides or a report")


def figure_file(draw: Callable[..., Sketch], *args: object) -> str:
    """The figure as an SVG file of its own, drawn at WIDTH whatever the page's mode."""
    return draw(*args, width=WIDTH).svg(standalone=True)
