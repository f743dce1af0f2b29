"""The attacker's view's figures: pure functions from core.teaching.attack results to plotly Figures (nothing here
draws on the page). Every one of them reads both data sets, so none is private, and their titles say so."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from scipy import stats

from core.teaching.attack import max_tpr
from ui.figures import GREY, titled
from ui.format import num
from ui.theme import ACCENT, CHOSEN, METHOD_COLORS, METHOD_LABELS, OTHER, TRUTH

if TYPE_CHECKING:
    from core.privacy.accounting import PrivacyProfile
    from core.teaching.attack import CountLaw, GameScore, GaussianLaw, PrivacyLoss

WITH, WITHOUT = "with the row (P)", "without it (P′)"
FLOOR = 1e-16  # the profile's log axis starts here: a pair's δ(ε) reaches 0 exactly
ROUNDING = 1e-14  # a pair's δ(ε) at or below this is the accountant's floating-point rounding, not a privacy loss
SPAN = 6.0  # a density is drawn over ± SPAN of its scales


def _densities(fig: go.Figure, x: np.ndarray, p: np.ndarray, q: np.ndarray) -> None:
    for y, name, color, dash in ((p, WITH, CHOSEN, "solid"), (q, WITHOUT, ACCENT, "dash")):
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=color, dash=dash, width=2),
                                 hovertemplate="%{x:.6g}: density %{y:.3g}<extra>" + name + "</extra>"))


def count_figure(law: CountLaw, stage: str, symbol: str) -> go.Figure:
    """The noisy count N̂ = N + Lap(1/ε) of a certificate on P and on P′: two Laplace densities, one count apart at
    most (the count's sensitivity is 1)."""
    lo, hi = min(law.N, law.N_prime) - SPAN * law.scale, max(law.N, law.N_prime) + SPAN * law.scale
    x = np.linspace(lo, hi, 401)
    fig = go.Figure()
    _densities(fig, x, stats.laplace.pdf(x, law.N, law.scale), stats.laplace.pdf(x, law.N_prime, law.scale))
    fig.update_xaxes(title=f"noisy count N̂ of {symbol}")
    fig.update_yaxes(title="Density", showticklabels=False)
    return titled(fig, f"{stage}: the noisy count, with and without the row · not private")


def release_figure(law: GaussianLaw, drawn: float | None = None) -> go.Figure:
    """T of Algorithm 5 on P and on P′ (the branch's certificates): two normal densities; `drawn` marks a released
    value of the game, without saying which data set it came from."""
    wide = max(law.sd, law.sd_prime)
    x = np.linspace(min(law.mean, law.mean_prime) - SPAN * wide, max(law.mean, law.mean_prime) + SPAN * wide, 401)
    fig = go.Figure()
    _densities(fig, x, stats.norm.pdf(x, law.mean, law.sd), stats.norm.pdf(x, law.mean_prime, law.sd_prime))
    if drawn is not None:
        fig.add_vline(x=drawn, line_color=TRUTH, line_width=2,
                      annotation=dict(text=f"this round's T = {num(drawn)}", xref="x"))
    fig.update_xaxes(title="Released value T")
    fig.update_yaxes(title="Density", showticklabels=False)
    return titled(fig, "Stage 4: the released value, with and without the row · not private")


def loss_figure(loss: PrivacyLoss, profile: PrivacyProfile) -> go.Figure:
    """δ(ε) of this pair (dp_accounting, on the branch) under the budget's guarantee δ(ε) for every pair, the chosen
    (ε, δ) starred: the pair's curve must lie below the guarantee's."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=profile.epsilon, y=np.maximum(profile.delta_basic, FLOOR), mode="lines",
                             name="the guarantee: any pair one row apart", line=dict(color=GREY, dash="dash"),
                             hovertemplate="ε = %{x:.3g}: δ ≤ %{y:.3g}<extra>guarantee</extra>"))
    # Cut where the accountant's answer is rounding (about 5e-16 once the true δ is 0): drawn flat, it would read as
    # a loss that never ends.
    pair = np.where(np.asarray(loss.deltas) > ROUNDING, loss.deltas, np.nan)
    fig.add_trace(go.Scatter(x=loss.epsilons, y=pair, mode="lines",
                             name="this pair (exact, on the likeliest branch) · not private",
                             line=dict(color=CHOSEN, width=3),
                             hovertemplate="ε = %{x:.3g}: δ = %{y:.3g}<extra>this pair</extra>"))
    fig.add_trace(go.Scatter(x=[profile.epsilon_chosen], y=[profile.delta_chosen], mode="markers",
                             name="the chosen (ε, δ)", marker=dict(symbol="star", size=15, color=ACCENT)))
    fig.update_xaxes(title="ε", range=[0, float(loss.epsilons[-1])])
    fig.update_yaxes(type="log", title="δ(ε) (log scale)", exponentformat="power", range=[np.log10(FLOOR), 0])
    if np.isnan(pair).any():
        first = int(np.argmax(np.isnan(pair)))
        cut = float(loss.epsilons[first])
        text = ("this pair's δ(ε) is 0 at every ε: nothing released on this branch depends on the row"
                if first == 0 else f"this pair's δ is 0 beyond ε ≈ {cut:.2g} (smaller values are rounding)")
        fig.add_annotation(x=cut if first else float(loss.epsilons[-1]) / 2, y=np.log10(ROUNDING), text=text,
                           showarrow=False, xanchor="left" if first else "center", yanchor="bottom",
                           font=dict(color=CHOSEN))
    return titled(fig, "Privacy loss: this pair against the guarantee")


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
        fig.add_trace(go.Scatter(x=[s.fpr], y=[s.tpr], mode="markers", name=f"{name} ({s.rounds} rounds)",
                                 marker=dict(symbol=symbol, size=14, color=color),
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
