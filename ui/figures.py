"""Every figure of the app, each a pure function from core results (or data) to a plotly Figure.

Nothing here draws on the page: the pages and ui.cards pass the figures to Streamlit. Traces computed from
the data without privacy say so in their names ("· not private").
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from ui.format import num
from ui.theme import ACCENT, CHOSEN, METHOD_COLORS, METHOD_LABELS, OTHER, TRUTH

if TYPE_CHECKING:
    from core.certificates import RecursiveBound
    from core.compare import Comparison
    from core.pipeline import Problem
    from core.release import Release
    from core.teaching import Steps

GREY = METHOD_COLORS["oracle"]
MAX_LEVELS = 12  # a histogram's column with at most this many distinct values gets one bar per value


# ---------------------------------------------------------------- Pipeline: stage 0


def theta_figure(problem: Problem, theta_star: NDArray | None, j: int | None) -> go.Figure:
    """θ(Pₙ) as bars, coordinate j highlighted, and the generating θ* of synthetic data as diamonds."""
    names = list(problem.feature_names)
    colors = [CHOSEN if i == j else OTHER for i in range(len(names))]
    fig = go.Figure(go.Bar(x=names, y=problem.fit.theta, marker_color=colors, name="θ(P<sub>n</sub>) · not private"))
    if theta_star is not None:
        fig.add_trace(go.Scatter(x=names, y=theta_star, mode="markers", name="θ* (generating parameter)",
                                 marker=dict(symbol="diamond", size=11, color=ACCENT)))
    fig.update_layout(showlegend=True, yaxis_title="coefficient")
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
    return go.Figure(data=data, layout=dict(
        xaxis=dict(domain=[0, 0.56], title="k (recursion steps)"),
        yaxis=dict(title="R<sup>k</sup>(λ)"),
        xaxis2=dict(domain=[0.64, 1], anchor="y2", range=window, title="k (recursion steps)"),
        yaxis2=dict(anchor="x2", range=[near.min() - margin, near.max() + margin] if near.size else None),
        annotations=titles,
    ))


def in_window(k: NDArray, v: NDArray, window: list[float]) -> tuple[NDArray, NDArray]:
    """The steps of a path inside window, and the one before, from which the first step inside is drawn."""
    inside = np.flatnonzero((k >= window[0]) & (k <= window[1]))
    if not inside.size:
        return k[:0], v[:0]
    start = max(int(inside[0]) - 1, 0)
    return k[start:inside[-1] + 1], v[start:inside[-1] + 1]


def number_line(points: list[tuple[str, float, str]]) -> go.Figure:
    """(label, value, colour) points on one horizontal axis, each with its label above."""
    fig = go.Figure()
    for text, x, color in points:
        fig.add_trace(go.Scatter(x=[x], y=[0], mode="markers+text", text=[text], textposition="top center",
                                 marker=dict(size=13, color=color), showlegend=False, cliponaxis=False))
    fig.update_yaxes(visible=False, range=[-0.5, 1.5])
    return fig


def bound_line(b: RecursiveBound, names: tuple[str, str]) -> go.Figure:
    """The true eigenvalue (not private) beside its certified bound, on one axis."""
    return number_line([(f"{names[0]} · not private", b.statistic, GREY), (names[1], b.lambda_hat, CHOSEN)])


# ---------------------------------------------------------------- Pipeline: stage 3


def test_figure(value: float, threshold: float, passed: bool) -> go.Figure:
    """The left side of (14) against its threshold, on a log scale; a value that is not positive is left out."""
    rows = [("threshold", threshold, GREY)]
    if math.isfinite(value) and value > 0:
        rows.append(("max(A, B)² − 1", value, CHOSEN if passed else ACCENT))
    fig = go.Figure(go.Bar(y=[r[0] for r in rows], x=[r[1] for r in rows], orientation="h",
                           marker_color=[r[2] for r in rows], text=[num(r[1]) for r in rows]))
    fig.update_xaxes(type="log", dtick=1, title="log scale")
    return fig


def log_edges(grid: NDArray) -> NDArray:
    """Cell edges of a log grid: geometric midpoints, and half a step beyond each end."""
    g = np.log(np.asarray(grid, dtype=float))
    mid = (g[1:] + g[:-1]) / 2
    return np.exp(np.concatenate([[2 * g[0] - mid[0]], mid, [2 * g[-1] - mid[-1]]]))


def region_figure(ns: NDArray, eps: NDArray, passes: NDArray, n: int, epsilon: float) -> go.Figure:
    """Where the noise-free test (14) passes over (n, total ε) (core.whatif), and a star at this sample and ε."""
    fig = go.Figure(go.Heatmap(
        x=log_edges(eps), y=log_edges(ns), z=passes.astype(int), zmin=0, zmax=1, showscale=False,
        colorscale=[[0, OTHER], [0.5, OTHER], [0.5, CHOSEN], [1, CHOSEN]],
        hovertemplate="n ≈ %{y:.3s}, ε ≈ %{x:.3g}: %{z}<extra>1 = passes</extra>",
    ))
    fig.add_trace(go.Scatter(x=[epsilon], y=[n], mode="markers", name="this sample and ε",
                             marker=dict(symbol="star", size=16, color=ACCENT, line=dict(color=TRUTH, width=1))))
    fig.update_xaxes(type="log", title="total ε")
    fig.update_yaxes(type="log", title="n")
    return fig


# ---------------------------------------------------------------- Pipeline: stage 4


def density_figure(r: Release) -> go.Figure:
    """N(u^T θ, (σω)²), the draw T, and the two intervals below the curve."""
    sd = r.noise_sd
    x = r.u_theta + sd * np.linspace(-4, 4, 241)
    y = np.exp(-0.5 * ((x - r.u_theta) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    peak = float(y.max())
    fig = go.Figure(go.Scatter(x=x, y=y, mode="lines", name="density of T · not private", line=dict(color=GREY)))
    for (lo, hi), text, color, level in ((r.interval, "private interval", CHOSEN, -0.12),
                                         (r.oracle_interval, "oracle interval · not private", ACCENT, -0.24)):
        fig.add_trace(go.Scatter(x=[lo, hi], y=[level * peak] * 2, mode="lines+markers", name=text,
                                 line=dict(color=color, width=5), marker=dict(symbol="line-ns-open", size=12)))
    for x, text, color, dash in ((r.value, "T (this draw)", TRUTH, "solid"),
                                 (r.u_theta, "u<sup>⊤</sup>θ(P<sub>n</sub>) · not private", GREY, "dash")):
        fig.add_trace(go.Scatter(x=[x, x], y=[0, peak], mode="lines", name=text, line=dict(color=color, dash=dash)))
    fig.update_layout(xaxis_title="T = u<sup>⊤</sup>θ(P<sub>n</sub>) + σωZ", yaxis_title="density")
    return fig


def release_line(r: Release) -> go.Figure:
    """The released T on its private interval: the publish-mode picture, private values only."""
    lo, hi = r.interval
    fig = go.Figure(go.Scatter(
        x=[lo, hi], y=[0, 0], mode="lines+markers", name=f"{r.interval_level:.0%} private interval",
        line=dict(color=CHOSEN, width=6), marker=dict(symbol="line-ns-open", size=14),
    ))
    fig.add_trace(go.Scatter(x=[r.value], y=[0], mode="markers+text", text=[f"T = {num(r.value)}"],
                             textposition="top center", name="released T", marker=dict(size=13, color=TRUTH)))
    fig.update_yaxes(visible=False, range=[-0.5, 1.5])
    return fig


# ---------------------------------------------------------------- Compare


def strip_figure(c: Comparison) -> go.Figure:
    """One box with every draw per method; ⊥ draws have no value and are counted in the method's label."""
    fig = go.Figure()
    for name, m in c.methods.items():
        values = [v for v in m.values if v is not None]
        bottoms = len(m.values) - len(values)
        label = METHOD_LABELS[name] + (f" · ⊥ ×{bottoms}" if bottoms else "")
        if not values:  # keeps the method's row, which an empty box would drop
            fig.add_trace(go.Scatter(x=[c.u_theta], y=[label], mode="text", text=["⊥ in every draw"],
                                     textfont=dict(color=METHOD_COLORS[name]), hoverinfo="skip"))
            continue
        fig.add_trace(go.Box(
            x=values, y=[label] * len(values), name=label, orientation="h", boxpoints="all", jitter=0.4,
            pointpos=0, marker=dict(color=METHOD_COLORS[name], size=6, opacity=0.7),
            line=dict(color=METHOD_COLORS[name]), fillcolor="rgba(0,0,0,0)", hoverinfo="x+name",
        ))
    fig.add_vline(x=c.u_theta, line_dash="dash", line_color="#555555",
                  annotation_text="u<sup>T</sup>θ(P<sub>n</sub>) · not private", annotation_position="top")
    if c.u_theta_star is not None:
        fig.add_vline(x=c.u_theta_star, line_dash="dot", line_color=TRUTH,
                      annotation_text="u<sup>T</sup>θ*", annotation_position="top", annotation_yshift=16)
    fig.update_yaxes(autorange="reversed")  # the first method on top
    fig.update_layout(height=110 + 60 * len(c.methods), margin=dict(l=10, r=10, t=60, b=40), showlegend=False,
                      xaxis_title="released value")
    return fig


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
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=30, b=10), xaxis_title=name, yaxis_title="rows",
                      bargap=0.05)
    return fig
