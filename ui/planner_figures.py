"""The Planner's figures: pure functions to plotly Figures (nothing here draws on the page). The half-width figure's
points are plans from assumptions, never measurements, and its traces say so in their names; the frontier figure is
a measurement on SYNTHETIC census files (core.teaching.frontier), and its title says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ui.figures import log_ticks, titled
from ui.format import num
from ui.theme import ACCENT, CHOSEN, OTHER, TRUTH

if TYPE_CHECKING:
    from core.teaching.frontier import FrontierPoint
    from core.teaching.planner import Plan

FRONTIER_COLORS = (CHOSEN, ACCENT, "#009E73", "#CC79A7")  # Okabe-Ito, as ui.theme
FRONTIER_DASHES = ("solid", "dash", "dot")


def half_width_figure(plans: Sequence[Plan], chosen: Plan, target: float | None) -> go.Figure:
    """Planned half-width of Algorithm 5's interval against n (log-log), the assumed n starred, the target dashed.

    Sample sizes at which the noise-free test (14) fails release nothing (⊥): they are marked in a band at the foot
    of the plot, on an axis of their own, so that they never read as half-widths.
    """
    released = [p for p in plans if p.half_width is not None]
    failed = [p.assumptions.n for p in plans if p.half_width is None]
    ns = [p.assumptions.n for p in plans]
    fig = go.Figure(go.Scatter(
        x=[p.assumptions.n for p in released], y=[p.half_width for p in released], mode="lines+markers",
        name="planned half-width (test (14) passes)", line=dict(color=CHOSEN), marker=dict(size=5),
        hovertemplate="n = %{x:,}<br>half-width %{y:.4g}<extra>plan</extra>",
    ))
    if failed:  # on their own axis, a band at the foot of the plot: not half-widths
        fig.add_trace(go.Scatter(
            x=failed, y=[0.04] * len(failed), yaxis="y2", mode="markers", name="test (14) fails: ⊥, no interval",
            marker=dict(symbol="x", size=7, color=OTHER), hovertemplate="n = %{x:,}: ⊥<extra>plan</extra>",
        ))
    if chosen.half_width is not None:
        fig.add_trace(go.Scatter(
            x=[chosen.assumptions.n], y=[chosen.half_width], mode="markers", name="assumed n",
            marker=dict(symbol="star", size=14, color=ACCENT),
            hovertemplate=f"n = %{{x:,}}<br>half-width {num(chosen.half_width)}<extra>plan</extra>",
        ))
    if target is not None:  # a trace, not add_hline: an hline's annotation lands off the line on a log axis
        fig.add_trace(go.Scatter(
            x=[min(ns), max(ns)], y=[target, target], mode="lines", name=f"target half-width {num(target)}",
            line=dict(color=TRUTH, dash="dash"), hoverinfo="skip",
        ))
    widths = [w for w in (*(p.half_width for p in released), chosen.half_width, target) if w is not None]
    fig.update_layout(
        xaxis=dict(type="log", title="Sample size n (eigenvalues held fixed)", **log_ticks(min(ns), max(ns))),
        yaxis=dict(type="log", title="Half-width of the private interval",
                   **(log_ticks(min(widths), max(widths)) if widths else {})),
        yaxis2=dict(overlaying="y", range=[0, 1], visible=False),
        legend=dict(orientation="h", yanchor="top", y=-0.18), margin=dict(t=50, b=90, l=60, r=20),
    )
    return titled(fig, "Planned half-width of the private interval against n (a plan, not a measurement)")


def frontier_figure(points: Sequence[FrontierPoint], top: float) -> go.Figure:
    """The measured width frontier (core.teaching.frontier): the ε needed against n, log-log, one line per state and
    target, its colour the target's and its dash the state's (so six lines need three colours); a cell no ε up to
    `top` served is marked at `top` with an open symbol, "not reached"."""
    fig = go.Figure()
    targets = sorted({p.coefficient for p in points})
    states = sorted({p.state for p in points})
    for state, coefficient in sorted({(p.state, p.coefficient) for p in points}):
        cell = sorted((p for p in points if (p.state, p.coefficient) == (state, coefficient)), key=lambda p: p.n)
        reached = [p for p in cell if p.epsilon_needed is not None]
        color = FRONTIER_COLORS[targets.index(coefficient) % len(FRONTIER_COLORS)]
        dash = FRONTIER_DASHES[states.index(state) % len(FRONTIER_DASHES)]
        fig.add_trace(go.Scatter(
            x=[p.n for p in reached], y=[p.epsilon_needed for p in reached], mode="lines+markers",
            name=f"{state}, {coefficient}", line=dict(color=color, dash=dash), marker=dict(size=8),
            hovertemplate=f"{state}, {coefficient}: n = %{{x:,}}, ε = %{{y:g}}<extra>measured</extra>"))
        missed = [p for p in cell if p.epsilon_needed is None]
        if missed:
            fig.add_trace(go.Scatter(
                x=[p.n for p in missed], y=[top] * len(missed), mode="markers",
                name=f"{state}, {coefficient}: not reached by ε = {top:g}",
                marker=dict(symbol="triangle-up-open", size=11, color=color),
                hovertemplate=f"{state}, {coefficient}: n = %{{x:,}}, over ε = {top:g}<extra>measured</extra>"))
    fig.update_xaxes(type="log", title="Sample size n (rows)", **log_ticks(min(p.n for p in points),
                                                                          max(p.n for p in points)))
    ticks = sorted({p.epsilon_needed for p in points if p.epsilon_needed is not None} | {top})
    fig.update_yaxes(type="log", title="ε needed (total, publish default split)", tickvals=ticks,
                     ticktext=[f"{e:g}" for e in ticks])  # the grid's values, not log minor ticks (20 read as "2")
    # The legend at the figure's foot, which Plotly keeps clear of the axis title (as many rows as the width needs),
    # the figure taller by a row for each of its long names, which a projector's text size may need: beside the plot
    # it would outgrow the figure's height and be cut off.
    fig.update_layout(height=380 + 30 * len(fig.data),
                      legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", xanchor="left", x=0))
    return titled(fig, "The ε an informative interval needs on SYNTHETIC census files (measured, not private data)")
