"""The attacker's view's figures drawn on request (the game's results, the baselines): pure functions from
core.teaching.attack results to plotly Figures (nothing here draws on the page); the figures drawn as the page opens
are SVG (ui.attack_sketches). Every one of them reads both data sets, so none is private, and their titles say so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from core.teaching.attack import max_tpr
from ui.attack_sketches import WITH, WITHOUT
from ui.figures import GREY, titled
from ui.theme import ACCENT, CHOSEN, METHOD_COLORS, METHOD_LABELS, OTHER

if TYPE_CHECKING:
    from core.teaching.attack import GameScore



def game_figure(score: GameScore, computer: GameScore | None = None) -> go.Figure:
    """The square of (false-positive rate, true-positive rate): the region (ε, δ) allows any guesser
    (core.teaching.attack.max_tpr), the coin's diagonal, and the guesses' point (the computer's likelihood-ratio
    guesser's beside it)."""
    fpr = np.linspace(0.0, 1.0, 201)
    top = max_tpr(fpr, score.epsilon, score.delta)
    bottom = 1.0 - max_tpr(1.0 - fpr, score.epsilon, score.delta)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=fpr, y=bottom, mode="lines", line=dict(color=OTHER, width=1), showlegend=False,
                             hoverinfo="skip", name="allowed region"))
    fig.add_trace(go.Scatter(x=fpr, y=top, mode="lines", fill="tonexty", line=dict(color=OTHER, width=1),
                             name=f"what (ε, δ) = ({score.epsilon:g}, {score.delta:g}) allows any guesser",
                             hovertemplate="FPR %{x:.2f}: TPR ≤ %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="a coin", line=dict(color=GREY, dash="dot")))
    points = [(score, "your guesses", ACCENT, "star")]
    points += [(computer, "the computer's best guesses", CHOSEN, "diamond")] if computer is not None else []
    for s, name, color, symbol in points:
        if not s.rounds:
            continue
        # Not clipped at the square's edge: a guesser who always says "in" sits at FPR 1, half outside it.
        fig.add_trace(go.Scatter(x=[s.fpr], y=[s.tpr], mode="markers", name=f"{name} ({s.rounds} rounds)",
                                 marker=dict(symbol=symbol, size=14, color=color), cliponaxis=False,
                                 hovertemplate="FPR %{x:.2f}, TPR %{y:.2f}<extra></extra>"))
    fig.update_xaxes(title="False-positive rate (said 'in' when out)", range=[0, 1], constrain="domain")
    fig.update_yaxes(title="True-positive rate (said 'in' when in)", range=[0, 1], scaleanchor="x")
    return titled(fig, "The membership game: guesses against the guarantee")


def baseline_figure(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Each method's releases on P and on P′ at the same budget, one row per method: how far apart the two clouds
    are, against how wide each is, is what the budget lets an attacker see."""
    fig = go.Figure()
    for i, (method, (p, q)) in enumerate(pairs.items()):
        label = METHOD_LABELS[method]
        for values, side, offset, symbol in ((p, WITH, 0.15, "circle"), (q, WITHOUT, -0.15, "x")):
            v = values[np.isfinite(values)]
            fig.add_trace(go.Scatter(
                x=v, y=np.full(v.size, i + offset), mode="markers", name=f"{label}, {side}",
                marker=dict(color=METHOD_COLORS[method], symbol=symbol, size=7, opacity=0.7), showlegend=i == 0,
                legendgroup=side, hovertemplate=f"{label}, {side}: %{{x:.6g}}<extra></extra>"))
    fig.update_yaxes(tickvals=list(range(len(pairs))), ticktext=[METHOD_LABELS[m] for m in pairs], title="")
    fig.update_xaxes(title="Released value of the coefficient")
    fig.update_layout(height=120 + 70 * len(pairs))
    return titled(fig, "Every method at the same (ε, δ), with and without the row · not private")
