"""The attacker's view's first figures as inline SVG (ui.svg): each stage's law on P and on P′ and the pair's privacy
loss. Pure functions from core.teaching.attack results to Sketches; every one reads both data sets, so none is private,
and their titles say so.

Why SVG: these are drawn as soon as the page opens, and in a new tab the first Plotly chart costs about a second
(its bundle; docs/benchmarks.md, "The lecture hall"). Here each is a few curves on two axes, laid out by hand, so no
legend can sit on an axis title and no title is clipped at any width."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ui.figures import GREY
from ui.format import num
from ui.svg import (
    FONT,
    INK,
    LINE,
    WIDTH,
    Kind,
    Scale,
    Sketch,
    diamond,
    extent,
    label,
    legend,
    line,
    polyline,
    title,
    title_lines,
    words,
    wrapped,
    x_axis,
)
from ui.theme import ACCENT, CHOSEN

if TYPE_CHECKING:
    from core.privacy.accounting import PrivacyProfile
    from core.teaching.attack import CountLaw, GaussianLaw, PrivacyLoss

WITH, WITHOUT = "with the row (P)", "without it (P′)"
FLOOR = 1e-16  # the profile's log axis starts here: a pair's δ(ε) reaches 0 exactly
ROUNDING = 1e-14  # a pair's δ(ε) at or below this is the accountant's floating-point rounding, not a privacy loss
SPAN = 6.0  # a density is drawn over ± SPAN of its scales
POINTS = 241
TOP, BASE, LEFT, RIGHT = 48.0, 228.0, 76.0, 16.0  # the plot's box; LEFT holds the turned axis name and the values
NOTE_LINE = 18.0  # px between a note's lines


def headline(heading: str, width: int) -> str:
    """The title, in one line where it fits and else on two (ui.svg.title_lines: a figure drawn at half width, or
    narrower for a projector, would cut it off); the second line ends above the plot."""
    lines = title_lines(heading, width)
    top = 20 if len(lines) == 1 else 18
    return "".join(title(text, top + LINE * k) for k, text in enumerate(lines))


def frame(heading: str, sx: Scale, x_name: str, y_name: str, keys: list[tuple[str, str, Kind]], width: int,
          y_ticks: list[tuple[float, str]] = (), note: str | None = None) -> tuple[list[str], int]:
    """The title, the x axis with its name, the y axis's name (turned, left of its values) and values, the legend
    below the x axis's name and a note below the legend, in lines of the figure's width: the parts and the figure's
    height."""
    out = [headline(heading, width), x_axis(sx, BASE, x_name, grid_top=TOP),
           label(16, (TOP + BASE) / 2, y_name, "middle", turn=True)]
    for y, text in y_ticks:
        out.append(line(sx.a, y, sx.b, y, INK, 1, opacity=0.12) + label(sx.a - 6, y + 4, text, "end", FONT - 1))
    marks, used = legend(keys, BASE + 58, width)
    lines = wrapped(note, width - 16, FONT - 1) if note else []
    below = BASE + 58 + used  # the legend's foot, where the note's lines start
    out += [label(8, below + 4 + NOTE_LINE * k, text, size=FONT - 1) for k, text in enumerate(lines)]
    return [*out, marks], round(below + NOTE_LINE * len(lines))


def densities(heading: str, x_name: str, x: NDArray, p: NDArray, q: NDArray, width: int,
              drawn: tuple[str, float] | None = None) -> Sketch:
    """Two densities over x, P's solid and P′'s dashed, on a density axis from 0 (no values: only their shapes
    matter); drawn: a (name, value) marked by a vertical line, without saying which data set it came from."""
    sx = Scale(float(x[0]), float(x[-1]), LEFT, width - RIGHT)
    sy = Scale(0.0, 1.08 * float(max(p.max(), q.max())), BASE, TOP)
    keys: list[tuple[str, str, Kind]] = [(WITH, CHOSEN, "line"), (WITHOUT, ACCENT, "dash")]
    keys += [(drawn[0], INK, "line")] if drawn is not None else []
    out, height = frame(heading, sx, x_name, "density", keys, width)
    out += [polyline(x, p, sx, sy, CHOSEN), polyline(x, q, sx, sy, ACCENT, dash=True)]
    shown = [f"{name}: a density largest at {num(float(x[int(np.argmax(d))]))}"
             for name, d in ((WITH, p), (WITHOUT, q))]
    if drawn is not None:
        out.append(line(sx(drawn[1]), BASE, sx(drawn[1]), TOP, INK, 2))
        shown.append(f"{drawn[0]} at {num(drawn[1])}")
    return Sketch(heading, "".join(out), width, height, words(heading, f"density against {x_name}", shown))


def count_sketch(law: CountLaw, stage: str, symbol: str, width: int = WIDTH) -> Sketch:
    """The noisy count N̂ = N + Lap(1/ε) of a certificate on P and on P′: two Laplace densities, one count apart at
    most (the count's sensitivity is 1)."""
    x = np.linspace(min(law.N, law.N_prime) - SPAN * law.scale, max(law.N, law.N_prime) + SPAN * law.scale, POINTS)
    return densities(f"{stage}: the noisy count, with and without the row · not private", f"noisy count N̂ of {symbol}",
                     x, stats.laplace.pdf(x, law.N, law.scale), stats.laplace.pdf(x, law.N_prime, law.scale), width)


def release_sketch(law: GaussianLaw, drawn: float | None = None, width: int = WIDTH) -> Sketch:
    """T of Algorithm 5 on P and on P′ (the branch's certificates): two normal densities; `drawn` marks a released
    value of the game."""
    wide = max(law.sd, law.sd_prime)
    x = np.linspace(min(law.mean, law.mean_prime) - SPAN * wide, max(law.mean, law.mean_prime) + SPAN * wide, POINTS)
    return densities("Stage 4: the released value, with and without the row · not private", "released value T", x,
                     stats.norm.pdf(x, law.mean, law.sd), stats.norm.pdf(x, law.mean_prime, law.sd_prime), width,
                     None if drawn is None else ("this round's T", drawn))


def pair_curve(loss: PrivacyLoss) -> NDArray:
    """The pair's δ(ε), missing (NaN) where the accountant's answer is rounding (about 5e-16 once the true δ is 0):
    drawn flat, it would read as a loss that never ends."""
    deltas = np.asarray(loss.deltas, dtype=float)
    return np.where(deltas > ROUNDING, deltas, np.nan)


def cut_note(loss: PrivacyLoss) -> str | None:
    """Where the pair's curve ends, in words; None when it runs to the last ε."""
    missing = np.isnan(pair_curve(loss))
    if not missing.any():
        return None
    first = int(np.argmax(missing))
    if first == 0:
        return "this pair's δ(ε) is 0 at every ε: nothing released on this branch depends on the row"
    return f"this pair's δ is 0 beyond ε ≈ {float(loss.epsilons[first]):.2g} (smaller values are rounding)"


def loss_sketch(loss: PrivacyLoss, profile: PrivacyProfile, width: int = WIDTH) -> Sketch:
    """δ(ε) of this pair (dp_accounting, on the branch) under the budget's guarantee δ(ε) for every pair, on a log
    axis from FLOOR to 1, the chosen (ε, δ) marked: the pair's curve must lie below the guarantee's."""
    heading = "Privacy loss: this pair against the guarantee"
    eps = np.asarray(loss.epsilons, dtype=float)
    sx = Scale(*extent([0.0, float(eps[-1])], 0.0), LEFT, width - RIGHT)
    sy = Scale(math.log10(FLOOR), 0.0, BASE, TOP)
    powers = range(round(math.log10(FLOOR)), 1, 4)
    keys: list[tuple[str, str, Kind]] = [("the guarantee: any pair one row apart", GREY, "dash"),
                                         ("this pair (exact, on the likeliest branch) · not private", CHOSEN, "line"),
                                         ("the chosen (ε, δ)", ACCENT, "diamond")]
    # Where the pair's curve ends is said below the legend: inside the plot, the words would cross a curve.
    note = cut_note(loss)
    out, height = frame(heading, sx, "ε", "δ(ε), log scale", keys, width,
                        [(sy(k), "1" if k == 0 else f"10<sup>{k}</sup>".replace("-", "−")) for k in powers], note)
    guarantee = np.log10(np.maximum(np.asarray(profile.delta_basic, dtype=float), FLOOR))
    pair = pair_curve(loss)
    chosen = (sx(profile.epsilon_chosen), sy(math.log10(max(profile.delta_chosen, FLOOR))))
    out += [polyline(np.asarray(profile.epsilon, dtype=float), guarantee, sx, sy, GREY, dash=True),
            polyline(eps, np.log10(pair), sx, sy, CHOSEN, 3), diamond(*chosen, 8, ACCENT)]
    shown = [f"the guarantee's δ(ε) from {num(float(profile.delta_basic[0]))} at ε = 0",
             f"this pair's δ(ε) from {num(float(loss.deltas[0]))} at ε = 0",
             f"the chosen (ε, δ) = ({profile.epsilon_chosen:g}, {profile.delta_chosen:g})", *([note] if note else [])]
    return Sketch(heading, "".join(out), width, height, words(heading, "δ(ε) on a log scale against ε", shown))

