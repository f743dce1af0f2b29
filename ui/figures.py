"""The app's Plotly figures, each a pure function from core results (or data) to a plotly Figure; the Pipeline's
figures that every change redraws are SVG (ui.svg), which shares the names and words of this module.

Nothing here draws on the page: the pages and ui.cards pass the figures to Streamlit. Traces computed from
the data without privacy say so in their names ("· not private").
"""

from __future__ import annotations

import base64
import math
import re
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from ui.format import num
from ui.theme import ACCENT, CHOSEN, DARK_COLORS, METHOD_COLORS, METHOD_LABELS, OTHER, TRUTH

if TYPE_CHECKING:
    from core.mechanisms.certificates import RecursiveBound
    from core.methods.compare import Comparison
    from core.privacy.accounting import PrivacyProfile
    from core.teaching.aids import Steps

GREY = METHOD_COLORS["oracle"]
MAX_LEVELS = 12  # a histogram's column with at most this many distinct values gets one bar per value


TITLE_FONT = 14  # px, a chart's title
TITLE_PAD = 16  # px from the figure's top to its title's
LIGHT_TEXT = "#4B5060"  # a chart's text in the light theme: 8:1 on white (WCAG AA asks 4.5:1)


def titled(fig: go.Figure, text: str) -> go.Figure:
    """fig with text as its layout title, left-aligned so the toolbar never covers it; a PNG exported from the
    toolbar carries it."""
    fig.update_layout(title=dict(text=text, x=0.01, xanchor="left", xref="container", font=dict(size=TITLE_FONT),
                                 y=1.0, yanchor="top", yref="container", pad=dict(t=TITLE_PAD)))
    return fig


# ---------------------------------------------------------------- Pipeline: stages 1 and 2


def eigenvalue_names(which: str) -> tuple[str, str]:
    """(the eigenvalue, its certified bound) in plotly's HTML; which is "min" or "max"."""
    return f"λ<sub>{which}</sub>(P<sub>n</sub>)", f"λ̂<sub>{which}</sub>"


def staircase(true_path: Steps, hat_path: Steps, b: RecursiveBound, names: tuple[str, str]) -> go.Figure:
    """R^k against k from the true eigenvalue (N steps) and from the certified bound (m steps), with a close-up
    of the end, where N, N̂ and m fall a few steps apart. One go.Figure call: make_subplots costs 5x more."""
    ends = [b.N, b.N_hat, b.m]
    pad = max(3.0, 0.3 * (max(ends) - min(ends)))
    window = [min(ends) - pad, max(ends) + pad]
    ys = np.concatenate([true_path[1], hat_path[1]])
    near = np.concatenate([v[(k >= window[0]) & (k <= window[1])] for k, v in (true_path, hat_path)])
    paths = [(*true_path, f"from {names[0]} · not private", GREY, "solid"),
             (*hat_path, f"from {names[1]}", CHOSEN, "solid")]
    # The markers are traces, not shapes: they join the legend, as N and N̂ are often too close to label.
    marks = [([x, x], [ys.min(), ys.max()], text, color, dash) for x, text, color, dash in (
        (b.N, "N · not private", GREY, "dash"), (b.N_hat, "N̂", CHOSEN, "dot"), (b.m, "m = ⌊N̂ − k⌋", ACCENT, "solid"))]
    # The close-up gets only the steps it shows, not a second copy of every path.
    close = [(*in_window(k, v, window), *rest) for k, v, *rest in paths]
    data = [dict(type="scatter", x=x, y=y, mode="lines", line_shape="hv", name=text, legendgroup=text,
                 showlegend=not axis, line=dict(color=color, dash=dash), xaxis=f"x{axis}", yaxis=f"y{axis}")
            for axis, lines in (("", paths + marks), ("2", close + marks)) for x, y, text, color, dash in lines]
    margin = 0.05 * (np.ptp(near) or abs(near.max()) or 1.0) if near.size else 0.0
    titles = [dict(text=text, x=x, xref="paper", y=1.0, yref="paper", yanchor="bottom", showarrow=False)
              for text, x in (("every step", 0.28), ("close-up of the end", 0.82))]
    return titled(go.Figure(data=data, layout=dict(
        xaxis=dict(domain=[0, 0.56], title="Recursion steps k"),
        yaxis=dict(title="R<sup>k</sup>(λ)"),
        xaxis2=dict(domain=[0.64, 1], anchor="y2", range=window, title="Recursion steps k"),
        yaxis2=dict(anchor="x2", range=[near.min() - margin, near.max() + margin] if near.size else None),
        annotations=titles,
        height=400,  # at 370 the legend, 25% of the plot height below it, touches the axis titles
    )), f"The recursion R<sup>k</sup> from {names[0]} (not private) and from {names[1]}")


def in_window(k: NDArray, v: NDArray, window: list[float]) -> tuple[NDArray, NDArray]:
    """The steps of a path inside window, and the one before, from which the first step inside is drawn."""
    inside = np.flatnonzero((k >= window[0]) & (k <= window[1]))
    if not inside.size:
        return k[:0], v[:0]
    start = max(int(inside[0]) - 1, 0)
    return k[start:inside[-1] + 1], v[start:inside[-1] + 1]


# ---------------------------------------------------------------- Pipeline: stage 3


TEST_AXIS = "left side of (14) ÷ threshold; passes at or below 1"


def log_edges(grid: NDArray) -> NDArray:
    """Cell edges of a log grid: geometric midpoints, and half a step beyond each end."""
    g = np.log(np.asarray(grid, dtype=float))
    mid = (g[1:] + g[:-1]) / 2
    return np.exp(np.concatenate([[2 * g[0] - mid[0]], mid, [2 * g[-1] - mid[-1]]]))


def log_ticks(lo: float, hi: float, most: int = 6) -> dict:
    """A log axis's ticks over [lo, hi] (lo > 0), written out in full: 1-2-5, 1-3 or 1 per decade, the densest with at
    most `most` of them (every other decade where even those are too many). Plotly's own ticks between the powers of
    ten are digits at three quarters of the axis's font, a 2 or a 5 that a room cannot read and that crowd a short
    axis."""
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for steps in ((1, 2, 5), (1, 3), (1,)):
        values = [v for k in decades for m in steps if lo <= (v := float(f"{m}e{k}")) <= hi]
        if len(values) <= most:
            break
    values = values[::math.ceil(len(values) / most)] if len(values) > most else values
    if len(values) < 2:  # less than a decade between two round values: its ends, to two digits
        values = sorted({float(f"{v:.2g}") for v in (lo, math.sqrt(lo * hi), hi)})
    return dict(tickvals=values, ticktext=[f"{v:,.0f}" if v >= 1 and v == round(v) else f"{v:g}" for v in values])


def region_figure(ns: NDArray, eps: NDArray, passes: NDArray, n: int, epsilon: float) -> go.Figure:
    """Where the noise-free test (14) passes over (n, total ε) (core.teaching.whatif), and a star at this sample and
    ε."""
    fig = go.Figure(go.Heatmap(
        x=log_edges(eps), y=log_edges(ns), z=passes.astype(int), zmin=0, zmax=1, showscale=False,
        colorscale=[[0, OTHER], [0.5, OTHER], [0.5, CHOSEN], [1, CHOSEN]],
        hovertemplate="n ≈ %{y:.3s}, ε ≈ %{x:.3g}: %{z}<extra>1 = passes</extra>",
    ))
    fig.add_trace(go.Scatter(x=[epsilon], y=[n], mode="markers", name="this sample and ε",
                             marker=dict(symbol="star", size=16, color=ACCENT, line=dict(color=TRUTH, width=1))))
    ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100) if eps.min() <= t <= eps.max()]
    fig.update_xaxes(type="log", title="Total ε", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
    # Up to ten times the largest n at which some ε still fails (and past this n): not a decade-wide all-pass band.
    failing = ns[~passes.all(axis=1)]
    top = min(float(ns.max()), 10.0 * max(float(failing.max()) if failing.size else float(ns.min()), float(n)))
    edges = log_edges(ns)
    high = max(top, edges[1])
    fig.update_yaxes(type="log", title="Sample size n", range=[math.log10(edges[0]), math.log10(high)],
                     **log_ticks(edges[0], high, 5))
    return titled(fig, "Where the noise-free test (14) passes (blue), over n and total ε · not private")


# ---------------------------------------------------------------- Compare


def strip_span(c: Comparison) -> tuple[float, float]:
    """The range of every released value and of uᵀθ(Pₙ): what the strip chart must show."""
    shown = [v for m in c.methods.values() for v in m.values if v is not None] + [c.u_theta]
    lo, hi = min(shown), max(shown)
    return (lo, hi) if hi > lo else (lo - 1.0, hi + 1.0)


def strip_figure(c: Comparison) -> go.Figure:
    """One box with every draw per method; ⊥ draws have no value and are counted in the method's label."""
    fig = go.Figure()
    for name, m in c.methods.items():
        values = [v for v in m.values if v is not None]
        bottoms = len(m.values) - len(values)
        label = METHOD_LABELS[name] + (f" · ⊥ ×{bottoms}" if bottoms else "")
        if not values:  # keeps the method's row, which an empty box would drop
            fig.add_trace(go.Scatter(x=[c.u_theta], y=[label], mode="text", text=["⊥ in every draw"],
                                     textfont=dict(color=TRUTH), hoverinfo="skip"))
            continue
        fig.add_trace(go.Box(
            x=values, y=[label] * len(values), name=label, orientation="h", boxpoints="all", jitter=0.4,
            pointpos=0, marker=dict(color=METHOD_COLORS[name], size=6, opacity=0.7),
            line=dict(color=METHOD_COLORS[name]), fillcolor="rgba(0,0,0,0)", hoverinfo="x+name",
        ))
    fig.add_vline(x=c.u_theta, line_dash="dash", line_color="#555555",
                  annotation_text="u<sup>T</sup>θ(P<sub>n</sub>) · not private", annotation_position="top")
    lo, hi = strip_span(c)
    star = c.u_theta_star
    if star is not None and lo - (hi - lo) <= star <= hi + (hi - lo):
        fig.add_vline(x=star, line_dash="dot", line_color=TRUTH,
                      annotation_text="u<sup>T</sup>θ*", annotation_position="top", annotation_yshift=16)
    elif star is not None:  # far from every draw: named at the edge, so the draws keep the width of the chart
        fig.add_annotation(x=1.0 if star > hi else 0.0, xref="paper", y=1.0, yref="paper", yshift=16,
                           xanchor="right" if star > hi else "left", showarrow=False, font=dict(color=TRUTH),
                           text=f"u<sup>T</sup>θ* = {num(star)} {'→' if star > hi else '←'}")
    fig.update_yaxes(autorange="reversed")  # the first method on top
    fig.update_layout(height=110 + 60 * len(c.methods), margin=dict(l=10, r=10, t=60, b=40), showlegend=False,
                      xaxis_title="Released value")
    return titled(fig, "Released values of every draw, by method")


# ---------------------------------------------------------------- Budget


def profile_figure(p: PrivacyProfile) -> go.Figure:
    """δ(ε) of the release's stages (core.privacy.accounting.privacy_profile) on a log δ axis: basic composition and the
    PLD route, with the chosen (ε, δ) marked. Every point of a curve is a guarantee that holds together with the
    chosen one: the same release is (ε, δ(ε))-DP for each ε."""
    fig = go.Figure()
    for delta, text, color, dash in ((p.delta_basic, "basic composition (Lemma 2.5)", GREY, "dash"),
                                     (p.delta_pld, "privacy-loss distributions (dp_accounting)", CHOSEN, "solid")):
        fig.add_trace(go.Scatter(x=p.epsilon, y=delta, mode="lines", name=text, line=dict(color=color, dash=dash),
                                 hovertemplate="ε = %{x:.4g}, δ ≤ %{y:.3g}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[p.epsilon_chosen], y=[p.delta_chosen], mode="markers", name="the chosen (ε, δ)",
                             marker=dict(symbol="star", size=15, color=ACCENT, line=dict(color=TRUTH, width=1))))
    fig.update_xaxes(title="ε", rangemode="tozero")
    fig.update_yaxes(type="log", title="δ(ε) (log scale)", exponentformat="power")
    return titled(fig, "Privacy profile δ(ε) of this release")


# ---------------------------------------------------------------- Data


def histogram(values: NDArray, name: str, domain_edges: bool) -> go.Figure:
    """Counts binned here, not in the browser: a million raw values would make a heavy page."""
    levels, counts = np.unique(values, return_counts=True)
    if levels.size <= MAX_LEVELS:
        x, width = levels, 0.8 * np.diff(levels).min() if levels.size > 1 else 0.2
    else:
        counts, edges = np.histogram(values, bins=40)
        x, width = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    fig = go.Figure(go.Bar(x=x, y=counts, width=width, marker_color=CHOSEN, name=name))
    if domain_edges:
        for edge in (-1.0, 1.0):
            fig.add_vline(x=edge, line_dash="dash", line_color=ACCENT)
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), xaxis_title=name, yaxis_title="Rows",
                      bargap=0.05)
    return titled(fig, f"Histogram of {name}")


# ---------------------------------------------------------------- themes and words


def themed(fig: go.Figure, theme: str | None) -> go.Figure:
    """A copy of fig for the app's theme ("light", "dark" or None, as st.context.theme.type gives it): in the dark
    theme the marks drawn in black or dark grey turn light (ui.theme.DARK_COLORS); the rest of the palette reads on
    both. The background, grid and text follow the theme through Streamlit's own chart theme."""
    if theme != "dark":  # Streamlit's light chart theme writes a chart's text in a grey of 3.7:1 on white
        light = go.Figure(fig).update_layout(font_color=LIGHT_TEXT, legend_font_color=LIGHT_TEXT,
                                             legend_title_font_color=LIGHT_TEXT)
        light.for_each_annotation(lambda a: a.update(font_color=LIGHT_TEXT) if a.font.color is None else None)
        axes = dict(tickfont_color=LIGHT_TEXT, title_font_color=LIGHT_TEXT)
        return light.update_xaxes(**axes).update_yaxes(**axes)
    spec = fig.to_dict()
    layout = {k: v for k, v in spec.get("layout", {}).items() if k != "template"}
    swapped = go.Figure(data=recolor(spec.get("data", []), DARK_COLORS), layout=recolor(layout, DARK_COLORS))
    if "template" in spec.get("layout", {}):
        swapped.layout.template = spec["layout"]["template"]
    return swapped


def typed_array(spec: dict) -> np.ndarray:
    """The NumPy array behind Plotly's typed-array encoding (base64 bytes of a dtype, with an optional shape)."""
    values = np.frombuffer(base64.b64decode(spec["bdata"]), dtype=np.dtype(spec["dtype"]))
    shape = spec.get("shape")
    if shape is None:
        return values.copy()
    dims = [int(n) for n in str(shape).split(",")] if isinstance(shape, str) else list(shape)
    return values.reshape(dims).copy()


def recolor(value: object, colors: dict[str, str]) -> object:
    """value with every string equal (ignoring case) to a key of colors replaced by its value, at any depth; a typed
    array as Plotly's to_dict encodes it ({dtype, bdata[, shape]}) comes back as the NumPy array it was."""
    table = {k.upper(): v for k, v in colors.items()}
    if isinstance(value, str):
        return table.get(value.upper(), value)
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        return typed_array(value)
    if isinstance(value, dict):
        return {k: recolor(v, colors) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [recolor(v, colors) for v in value]
    return value


def plain(text: object) -> str:
    """Plotly's HTML label as plain text: <sub>n</sub> becomes n, tags and the "·" separators go."""
    out = re.sub(r"<br\s*/?>", " ", str(text or ""))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", out)).replace(" · ", ", ").strip()


def values_of(xs: object) -> NDArray:
    """The numeric values of a trace's coordinate (categories and missing values dropped)."""
    if xs is None:
        return np.array([])
    arr = np.asarray(xs, dtype=object).ravel()
    nums = [float(v) for v in arr if isinstance(v, (int, float, np.number)) and math.isfinite(float(v))]
    return np.asarray(nums, dtype=float)


def category(labels: list, i: int) -> str:
    """The label of bar i: a number with num's digits, text as plain text, its index without labels."""
    if not labels:
        return str(i)
    v = labels[i]
    return num(float(v)) if isinstance(v, (int, float, np.number)) else plain(v)


def describe_trace(t: go.BaseTraceType) -> str:
    """One trace in words: its name and the values that matter (a point, a span, a range, counts)."""
    name = plain(t.name) or t.type
    if t.type == "heatmap":
        z = np.asarray(t.z, dtype=float)
        return f"a {z.shape[0]} × {z.shape[1]} grid with value 1 in {int(np.nansum(z == 1))} of {z.size} cells"
    if t.type == "box":
        xs = values_of(t.x)
        return f"{name}: {xs.size} values, median {num(float(np.median(xs)))}" if xs.size else name
    xs, ys = values_of(t.x), values_of(t.y)
    if not xs.size and not ys.size:
        return f"{name}: nothing to draw"
    if t.type == "bar":
        heights, labels = (xs, t.y) if t.orientation == "h" else (ys, t.x)
        labels = list(labels) if labels is not None else []
        if heights.size == 1:
            return f"{name}: {num(heights[0])}"
        hi, lo = int(np.argmax(heights)), int(np.argmin(heights))
        return (f"{name}: {heights.size} bars from {num(heights[lo])} ({category(labels, lo)}) "
                f"to {num(heights[hi])} ({category(labels, hi)})")
    if xs.size == 1:
        return f"{name} at {num(xs[0])}" + (f", {num(ys[0])}" if ys.size == 1 and ys[0] != 0 else "")
    if xs.size == 2 and xs[0] == xs[1]:
        return f"{name} at {num(xs[0])}"
    if xs.size == 2:
        return f"{name} from {num(xs[0])} to {num(xs[1])}"
    if not ys.size or not xs.size or ys.min() == ys.max():  # a constant y marks places, not values
        vs = xs if xs.size else ys
        return f"{name} over {num(vs.min())} to {num(vs.max())}"
    peak = int(np.argmax(ys))
    return (f"{name} over {num(xs.min())} to {num(xs.max())}, from {num(ys.min())} to {num(ys.max())}"
            f" (largest at {num(xs[peak])})")


def alt_text(fig: go.Figure) -> str:
    """Fig in one or two sentences, from its data: the title and axes, then every trace with its key values and
    the marked lines (for a caption or an aria label)."""
    title = plain(fig.layout.title.text) or "A chart"
    x_title, y_title = plain(fig.layout.xaxis.title.text), plain(fig.layout.yaxis.title.text)
    axes = f"{y_title} against {x_title}" if x_title and y_title and fig.layout.yaxis.visible is not False \
        else x_title
    first = f"{title}" + (f" ({axes})" if axes else "") + "."
    # A trace kept out of the legend repeats one that is in it (the staircase's close-up): described once.
    parts = list(dict.fromkeys(describe_trace(t) for t in fig.data if t.showlegend is not False or
                               not any(u.name == t.name and u.showlegend is not False for u in fig.data)))
    marks = [plain(a.text) for a in fig.layout.annotations if a.xref != "paper" and a.text]
    parts += [f"marked: {', '.join(marks)}"] if marks else []
    return f"{first} Shown: {'; '.join(p for p in parts if p)}." if parts else first

