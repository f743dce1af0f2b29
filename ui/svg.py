"""The Pipeline's figures that every change redraws, as inline SVG: the fit θ(Pₙ), the test (14), the release's
density and the number lines of a bound and of a release. Each is a pure function from core results to a Sketch.

Why not Plotly, which draws every other chart: in a new browser tab the first Plotly chart costs about 1.2 s
(loading and compiling its 4.7 MB bundle), and each Plotly figure costs some 20 ms to build on the server and
50 ms to draw on every ε change (docs/benchmarks.md). These figures are simple (bars, points on an axis, one
curve); as SVG they take about a millisecond to write and nothing to run in the browser. matplotlib, which
writes SVG too, took 36 to 50 ms per figure, more than Plotly.

Text and axes take the page's colour (currentColor), so both themes read them; the palette is ui.theme's.
Labels use Plotly's <sub>/<sup> markup, so the names of ui.figures serve both; every other character is
escaped and every control character (a line break would end Markdown's HTML block) becomes a space, as feature
names come from the user's file (whose own <sub> would only become a subscript). A Sketch is drawn at WIDTH
pixels and scaled to its container. The page's width is not known to the server, so in presentation mode a figure is
drawn once for each band of container widths (fitted): the browser shows the drawing made for its container, scaled
up by PRESENTING_SCALE or a little more, so that its smallest text (FONT - 1) shows at 18 px or more."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from ui.figures import GREY, TEST_AXIS, plain
from ui.format import BAND_STEP, FIGURE_BANDS, num
from ui.labels import capitalised
from ui.theme import ACCENT, CHOSEN, OTHER

if TYPE_CHECKING:
    from core.mechanisms.certificates import RecursiveBound
    from core.mechanisms.pipeline import Problem
    from core.mechanisms.release import Release

WIDTH = 960  # the Pipeline's cards on a 1400-pixel screen: drawn at this size, text appears at its own size
FONT = 13
PRESENTING_SCALE = 18 / (FONT - 1)  # a room reads 18 px: the smallest text (a tick's value) scaled up to it
# A drawing per band of container widths, each 1/PRESENTING_SCALE of its band's narrowest container.
PRESENTING_WIDTHS = tuple(round(band / PRESENTING_SCALE) for band in FIGURE_BANDS)
LINE = FONT + 9  # px between the baselines of a title's two lines (room for a subscript)
KEY_ROW = 24.0  # px between a legend's rows: a subscript (θ(P<sub>n</sub>)) hangs below its row's baseline
CHAR_WIDTH = 0.56  # an average character's width, in font sizes
INK = "currentColor"  # the page's text colour, in either theme
FILE_STYLE = "color:#31333F;background:#FFFFFF;font-family:'Source Sans Pro',sans-serif"  # a downloaded file
Kind = Literal["bar", "line", "dash", "diamond", "span"]


@dataclass(frozen=True)
class Sketch:
    """A figure drawn as SVG: its title (markup), the SVG elements, its size in pixels and the figure in words."""

    title: str
    body: str
    width: int
    height: int
    alt: str

    def svg(self, standalone: bool = False, band: int | None = None) -> str:
        """The whole <svg>: scaled to its container on the page (up to 1.25x its size; a drawing for `band` of a
        fitted figure up to BAND_STEP x PRESENTING_SCALE, where the next band's drawing takes over), or a file of
        its own with the light theme's colours."""
        most = 1.25 if band is None else BAND_STEP * PRESENTING_SCALE
        style = FILE_STYLE if standalone else (
            f"width:100%;height:auto;max-width:{most * self.width:.0f}px;font-family:inherit;display:block")
        kind = "" if band is None else f'class="psp-band-{band}" '
        return (f'<svg xmlns="http://www.w3.org/2000/svg" {kind}viewBox="0 0 {self.width} {self.height}" '
                f'width="{self.width}" height="{self.height}" role="img" aria-label="{attr(self.alt)}" '
                f'style="{style}"><title>{attr(plain(self.title))}</title>{self.body}</svg>')

    def html(self) -> str:
        """For st.markdown, $ escaped (no maths). One line, as a blank line would end Markdown's HTML block: the
        drawing writes none, and attr turns the control characters of any text into spaces."""
        return f'<div class="psp-figure">{self.svg()}</div>'.replace("$", "&#36;")


def fitted(drawings: list[Sketch]) -> str:
    """For st.markdown, as Sketch.html: one figure drawn at PRESENTING_WIDTHS, one drawing per band of container widths
    (ui.format.FIGURE_BANDS). The page's CSS (ui.format.band_rules) shows only the drawing of the band the figure's
    container falls in, scaled by the container's width over the drawing's: PRESENTING_SCALE to BAND_STEP times
    that, so its text shows at PRESENTING_SCALE to BAND_STEP x PRESENTING_SCALE times its drawn size."""
    svgs = "".join(d.svg(band=k) for k, d in enumerate(drawings))
    return f'<div class="psp-figure"><div class="psp-fit">{svgs}</div></div>'.replace("$", "&#36;")


# ---------------------------------------------------------------- drawing


def attr(text: str) -> str:
    """text for SVG: escaped, and control characters (\\r, \\n, ...) as spaces."""
    return html.escape(re.sub(r"[\x00-\x1f\x7f]", " ", text), quote=True)


def rich(text: str) -> str:
    """Markup as SVG text: escaped, then <sub>/<sup> as shifted, smaller spans."""
    out = attr(text)
    for tag, shift in (("sub", "sub"), ("sup", "super")):
        out = re.sub(f"&lt;{tag}&gt;(.*?)&lt;/{tag}&gt;",
                     rf'<tspan baseline-shift="{shift}" font-size="75%">\1</tspan>', out)
    return out


def text_width(text: str, size: float = FONT) -> float:
    """An estimate of the drawn width of text (its plain characters), for layout."""
    return CHAR_WIDTH * size * len(plain(text))


def wrapped(text: str, width: float, size: float = FONT) -> list[str]:
    """text in lines of at most `width` pixels (text_width's estimate), broken at spaces."""
    lines, current = [], ""
    for word in text.split(" "):
        longer = f"{current} {word}".strip()
        if current and text_width(longer, size) > width:
            lines.append(current)
            longer = word
        current = longer
    return [*lines, current]


def hint(tip: str | None) -> str:
    """A tooltip for the element it is put in."""
    return f"<title>{attr(tip)}</title>" if tip else ""


def label(x: float, y: float, text: str, anchor: str = "start", size: float = FONT, color: str = INK,
          weight: str = "normal", tip: str | None = None, turn: bool = False) -> str:
    """Text at (x, y), its baseline; turn: read upwards, for a vertical axis."""
    turned = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if turn else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{color}" text-anchor="{anchor}" '
            f'font-weight="{weight}"{turned}>{hint(tip)}{rich(text)}</text>')


def line(x1: float, y1: float, x2: float, y2: float, color: str = INK, width: float = 1.0,
         dash: bool = False, opacity: float = 1.0) -> str:
    dashes = ' stroke-dasharray="5 4"' if dash else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
            f'stroke-width="{width}" stroke-opacity="{opacity}"{dashes}/>')


def rect(x: float, y: float, w: float, h: float, color: str, tip: str | None = None) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{h:.1f}" fill="{color}">{hint(tip)}</rect>'


def diamond(x: float, y: float, r: float, color: str, tip: str | None = None) -> str:
    return (f'<path d="M{x:.1f},{y - r:.1f}L{x + r:.1f},{y:.1f}L{x:.1f},{y + r:.1f}L{x - r:.1f},{y:.1f}Z" '
            f'fill="{color}">{hint(tip)}</path>')


def dot(x: float, y: float, r: float, color: str) -> str:
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{color}"/>'


def polyline(xs: NDArray, ys: NDArray, sx: Scale, sy: Scale, color: str, width: float = 2.0,
             dash: bool = False) -> str:
    """A curve through the finite points, broken where a value is missing (NaN)."""
    dashes = ' stroke-dasharray="7 5"' if dash else ""
    out, run = [], []
    for x, y in [*zip(xs, ys, strict=True), (math.nan, math.nan)]:
        if math.isfinite(x) and math.isfinite(y):
            run.append(f"{sx(x):.1f},{sy(y):.1f}")
            continue
        if len(run) > 1:
            out.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="{color}" stroke-width="{width:g}"'
                       f'{dashes}/>')
        run = []
    return "".join(out)


def span(x1: float, x2: float, y: float, color: str, width: float = 5.0) -> str:
    """An interval: a thick line with an end cap at each end."""
    return (line(x1, y, x2, y, color, width) + line(x1, y - 6, x1, y + 6, color, 2)
            + line(x2, y - 6, x2, y + 6, color, 2))


def title_lines(text: str, width: float) -> list[str]:
    """A title in one line where it fits `width`, else in two, broken at the last " · " or space that fits."""
    if text_width(text, FONT + 2) <= width - 16:
        return [text]
    fits = int((width - 16) / (CHAR_WIDTH * (FONT + 2)))
    cut = max(text.rfind(" · ", 0, fits), text.rfind(" ", 0, fits))
    return [text[:cut], text[cut:].removeprefix(" · ").strip()]


def title(text: str, y: float = 20) -> str:
    return label(8, y, text, size=FONT + 2, weight="600")


def headed(heading: str, parts: list[str], width: int, height: float, alt: str) -> Sketch:
    """A Sketch of `parts`, laid out below a one-line title, under its title: where the title takes two lines at this
    width, the drawing moves down a line."""
    lines = title_lines(heading, width)
    shift = LINE * (len(lines) - 1)
    body = "".join(parts)
    head = "".join(title(text, 20 + LINE * k) for k, text in enumerate(lines))
    moved = f'<g transform="translate(0 {shift})">{body}</g>' if shift else body
    return Sketch(heading, head + moved, width, round(height + shift), alt)


@dataclass(frozen=True)
class Scale:
    """A linear map from the data's [lo, hi] to the drawing's pixels [a, b]."""

    lo: float
    hi: float
    a: float
    b: float

    def __call__(self, v: float) -> float:
        return self.a + (v - self.lo) * (self.b - self.a) / (self.hi - self.lo)


def extent(values: Iterable[float], pad: float = 0.05) -> tuple[float, float]:
    """The finite values' range, widened by pad on each side; a range around a single value otherwise."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    if hi == lo:
        half = abs(lo) * 0.1 or 1.0
        return lo - half, hi + half
    return lo - pad * (hi - lo), hi + pad * (hi - lo)


def ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round values in [lo, hi], about count of them, a step of 1, 2, 2.5 or 5 times a power of ten."""
    raw = (hi - lo) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [k * step for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def tick_texts(values: list[float]) -> list[str]:
    """Ticks' values written alike with the digits their step needs: decimals, or e-notation when the largest is
    outside [1e-4, 1e6); 0 without a sign or a rounding residue."""
    step = values[1] - values[0] if len(values) > 1 else abs(values[0]) or 1.0
    top = max(abs(v) for v in values)
    power = math.floor(math.log10(step) + 1e-9)
    extra = 1 if round(step / 10.0**power, 6) == 2.5 else 0
    decimals = max(0, -power + extra)
    digits = max(1, math.floor(math.log10(top)) - power + 1 + extra)  # significant digits, for e-notation

    def text(v: float) -> str:
        if abs(v) < step * 1e-6:
            return "0"
        return (f"{v:,.{decimals}f}" if 1e-4 <= top < 1e6 else f"{v:.{digits}g}").replace("-", "−")

    return [text(v) for v in values]


def x_axis(s: Scale, y: float, name: str = "", grid_top: float | None = None) -> str:
    """The axis line at height y, its ticks and their values below it, light grid lines up to grid_top, and
    its name below the values, capitalised as every title is."""
    values = ticks(s.lo, s.hi)
    out = [line(s.a, y, s.b, y, INK, 1, opacity=0.5)]
    for v, text in zip(values, tick_texts(values), strict=True):
        x = s(v)
        if grid_top is not None:
            out.append(line(x, grid_top, x, y, INK, 1, opacity=0.12))
        out.append(line(x, y, x, y + 4, INK, 1, opacity=0.5))
        out.append(label(x, y + 17, text, "middle", FONT - 1, INK))
    if name:
        out.append(label((s.a + s.b) / 2, y + 34, capitalised(name), "middle"))
    return "".join(out)


def key_mark(kind: Kind, x: float, y: float, color: str) -> str:
    """The legend's sample of a mark."""
    if kind == "bar":
        return rect(x, y - 6, 16, 12, color)
    if kind == "diamond":
        return diamond(x + 8, y, 6, color)
    if kind == "span":
        return line(x, y, x + 16, y, color, 5)
    return line(x, y, x + 16, y, color, 2, dash=kind == "dash")


def legend(items: list[tuple[str, str, Kind]], y: float, width: float) -> tuple[str, float]:
    """(name, colour, kind) keys in rows from the left, wrapping at width; the SVG and the height it takes."""
    out, x, row = [], 8.0, 0
    for name, color, kind in items:
        w = 24 + text_width(name) + 18
        if x > 8 and x + w > width:
            x, row = 8.0, row + 1
        yy = y + KEY_ROW * row
        out.append(key_mark(kind, x, yy, color) + label(x + 22, yy + 4, name))
        x += w
    return "".join(out), KEY_ROW * (row + 1)


def shorten(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------- the figures


def theta_figure(problem: Problem, theta_star: NDArray | None, j: int | None, width: int = WIDTH) -> Sketch:
    """θ(Pₙ) as horizontal bars, one row per feature (census names of up to 46 characters read across), the
    coordinate j highlighted, and the generating θ* of synthetic data as diamonds."""
    names, theta = list(problem.feature_names), np.asarray(problem.fit.theta, dtype=float)
    star = None if theta_star is None else np.asarray(theta_star, dtype=float)
    heading = "The fit θ(P<sub>n</sub>) of (1), by feature · not private"
    fits = int((0.4 * width - 16) / (CHAR_WIDTH * (FONT - 1)))  # characters of a name that fit the label column
    left = min(0.4 * width, max(text_width(shorten(n, fits), FONT - 1) for n in names) + 16)
    top, row = 34.0, 22.0
    bottom = top + row * len(names)
    s = Scale(*extent([0.0, *theta, *(star if star is not None else [])]), left, width - 16)
    out = [x_axis(s, bottom + 4, "coefficient", grid_top=top)]
    for k, (name, t) in enumerate(zip(names, theta, strict=True)):
        y = top + row * k
        x0, x1 = sorted((s(0.0), s(t)))
        out.append(rect(x0, y + 4, x1 - x0, row - 8, CHOSEN if k == j else OTHER, f"{name}: θ = {num(t)}"))
        out.append(label(left - 6, y + row / 2 + 4, shorten(name, fits), "end", FONT - 1, tip=name))
        if star is not None:
            out.append(diamond(s(star[k]), y + row / 2, 6, ACCENT, f"{name}: θ* = {num(star[k])}"))
    out.append(line(s(0.0), top, s(0.0), bottom + 4, INK, 1, opacity=0.6))
    keys: list[tuple[str, str, Kind]] = [("θ(P<sub>n</sub>) · not private", OTHER, "bar")]
    keys += [(f"{names[j]}: the coefficient released", CHOSEN, "bar")] if j is not None else []
    keys += [("θ* (generating parameter)", ACCENT, "diamond")] if star is not None else []
    marks, used = legend(keys, bottom + 60, width)
    shown = [bars_in_words("θ(P<sub>n</sub>) · not private", names, theta)]
    if j is not None:
        shown.append(f"highlighted: {names[j]} at {num(theta[j])}")
    if star is not None:
        shown.append(bars_in_words("θ* (generating parameter)", names, star))
    return headed(heading, [*out, marks], width, bottom + 56 + used, words(heading, "coefficient", shown))


def bars_in_words(name: str, names: list[str], values: NDArray) -> str:
    lo, hi = int(np.argmin(values)), int(np.argmax(values))
    return (f"{plain(name)}: {len(values)} values from {num(values[lo])} ({names[lo]}) "
            f"to {num(values[hi])} ({names[hi]})")


def words(heading: str, axis: str, shown: list[str]) -> str:
    """A figure in words: its title and axis, then what it shows (for the caption and the aria label)."""
    first = plain(heading) + (f" ({plain(axis)})" if axis else "") + "."
    return f"{first} Shown: {'; '.join(shown)}." if shown else first


def test_figure(value: float, threshold: float, passed: bool, width: int = WIDTH) -> Sketch:
    """The test (14) as one ratio, value/threshold, on a linear axis from 0 against 1: core.mechanisms.stability passes
    when value <= threshold. A value that could not be formed (NaN, inf) draws no bar and says so."""
    heading = f"Stability test (14): {'passes' if passed else 'fails'}"
    ratio = value / threshold if math.isfinite(value) and threshold > 0 else math.nan
    missing = "the threshold of (14) is not positive" if math.isfinite(value) and not threshold > 0 else \
        "the left side of (14) could not be formed"
    s = Scale(0.0, max(1.25, 1.15 * ratio) if math.isfinite(ratio) else 1.25, 44, width - 60)
    out = [label(38, 56, "(14)", "end", FONT - 1), x_axis(s, 76, TEST_AXIS, grid_top=34)]
    if math.isfinite(ratio):
        out.append(rect(s.a, 40, s(ratio) - s.a, 24, CHOSEN if passed else ACCENT,
                        f"max(A, B)² − 1 = {num(value)}, threshold = {num(threshold)}"))
        out.append(label(s(ratio) + 6, 56, num(ratio)))
        shown = [f"left side ÷ threshold: {num(ratio)}"]
    else:
        out.append(label((s.a + s.b) / 2, 56, missing, "middle"))
        shown = [missing]
    out.append(line(s(1.0), 32, s(1.0), 76, INK, 1.5, dash=True) + label(s(1.0) + 5, 72, "1 = threshold",
                                                                         size=FONT - 1))
    return headed(heading, out, width, 124, words(heading, TEST_AXIS, shown + ["marked: 1 = threshold"]))


def density_figure(r: Release, width: int = WIDTH) -> Sketch:
    """N(uᵀθ, (σω)²) on a density axis from 0, the draw T and uᵀθ(Pₙ) as vertical lines, and the private and
    oracle intervals in a strip below the curve (they have no density)."""
    heading = "The release T: its density, this draw and the two intervals"
    axis_name = "T = uᵀθ(P<sub>n</sub>) + σωZ"
    sd = r.noise_sd
    x = r.u_theta + sd * np.linspace(-4, 4, 121)
    y = np.exp(-0.5 * ((x - r.u_theta) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    peak = float(y.max())
    top, base = 36.0, 200.0
    levels = ticks(0.0, 1.08 * peak, 4)  # the density axis, from 0
    texts = tick_texts(levels)
    left = max(64.0, 34 + max(text_width(t, FONT - 1) for t in texts))  # room for the axis name and the values
    sx = Scale(*extent([*x, *r.interval, *r.oracle_interval, r.value], 0.02), left, width - 16)
    sy = Scale(0.0, 1.08 * peak, base, top)
    out = [x_axis(sx, 252, axis_name, grid_top=top)]
    for v, text in zip(levels, texts, strict=True):
        out.append(line(sx.a, sy(v), sx.b, sy(v), INK, 1, opacity=0.12))
        out.append(label(sx.a - 6, sy(v) + 4, text, "end", FONT - 1))
    out.append(label(14, (top + base) / 2, "density", "middle", turn=True))
    out.append(polyline(x, y, sx, sy, GREY))
    out.append(line(sx(r.u_theta), base, sx(r.u_theta), top, GREY, 1.5, dash=True))
    out.append(line(sx(r.value), base, sx(r.value), top, INK, 1.5))
    for (lo, hi), name, color, yy in ((r.interval, "private", CHOSEN, 218), (r.oracle_interval, "oracle", ACCENT, 236)):
        out.append(label(sx.a - 6, yy + 4, name, "end", FONT - 1) + span(sx(lo), sx(hi), yy, color))
    keys: list[tuple[str, str, Kind]] = [
        ("density of T · not private", GREY, "line"), ("private interval", CHOSEN, "span"),
        ("oracle interval · not private", ACCENT, "span"), ("T (this draw)", INK, "line"),
        ("uᵀθ(P<sub>n</sub>) · not private", GREY, "dash")]
    marks, used = legend(keys, 306, width)
    shown = [f"density of T, not private, over {num(x[0])} to {num(x[-1])}, largest at {num(r.u_theta)}",
             f"private interval from {num(r.interval[0])} to {num(r.interval[1])}",
             f"oracle interval, not private, from {num(r.oracle_interval[0])} to {num(r.oracle_interval[1])}",
             f"T (this draw) at {num(r.value)}", f"uᵀθ(Pn), not private, at {num(r.u_theta)}"]
    return headed(heading, [*out, marks], width, 300 + used, words(heading, f"density against {axis_name}", shown))


def number_line(heading: str, points: list[tuple[str, float, str]], axis_name: str = "",
                interval: tuple[str, float, float, str] | None = None, width: int = WIDTH) -> Sketch:
    """(name, value, colour) points on one axis, each named above it (alternately higher where two names would
    meet), and an optional (name, lo, hi, colour) interval on the axis."""
    values = [v for _, v, _ in points] + ([interval[1], interval[2]] if interval else [])
    s = Scale(*extent(values, 0.12), 24, width - 24)
    out, shown = [x_axis(s, 104, axis_name)], []
    if interval is not None:
        name, lo, hi, color = interval
        out.append(span(s(lo), s(hi), 80, color, 6))
        shown.append(f"{plain(name)} from {num(lo)} to {num(hi)}")
    last = -math.inf  # where the last name on the lower row ends
    for name, v, color in sorted((p for p in points if math.isfinite(p[1])), key=lambda p: p[1]):
        x, w = s(v), text_width(name)
        high = x - w / 2 < last + 8
        out.append(dot(x, 80, 6.5, color) + label(x, 40 if high else 64, name, "middle"))
        last = last if high else x + w / 2
        shown.append(f"{plain(name)} at {num(v)}")
    return headed(heading, out, width, 144 if axis_name else 126, words(heading, axis_name, shown))


def bound_line(b: RecursiveBound, names: tuple[str, str], width: int = WIDTH) -> Sketch:
    """The true eigenvalue (not private) beside its certified bound, on one axis."""
    return number_line(f"{names[0]} (not private) and its certified bound {names[1]}",
                       [(f"{names[0]} · not private", b.statistic, GREY), (names[1], b.lambda_hat, CHOSEN)],
                       width=width)


def release_line(r: Release, width: int = WIDTH) -> Sketch:
    """The released T on its private interval: the publish-mode picture, private values only."""
    level = f"{r.interval_level:.0%}"
    return number_line(f"The released T and its {level} private interval", [(f"T = {num(r.value)}", r.value, INK)],
                       "released value", (f"{level} private interval", *r.interval, CHOSEN), width)


def forest_figure(rows: list[dict], level: float, fitted: dict[str, float] | None = None, together: bool = True,
                  width: int = WIDTH) -> Sketch:
    """A regression table's forest plot: one row per coefficient (rows of core.report.table_document), its private
    value and interval at `level` for all rows at once (`together`) or for each on its own, 0 marked; in teaching views
    the fit's values beside them as diamonds, not private."""
    names = [r["name"] for r in rows]
    heading = f"Regression table: {len(rows)} coefficients, one release"
    fits = int((0.4 * width - 16) / (CHAR_WIDTH * (FONT - 1)))
    left = min(0.4 * width, max(text_width(shorten(n, fits), FONT - 1) for n in names) + 16)
    top, row = 34.0, 22.0
    bottom = top + row * len(rows)
    s = Scale(*extent([0.0, *(r["low"] for r in rows), *(r["high"] for r in rows),
                       *((fitted or {}).values())]), left, width - 16)
    out = [x_axis(s, bottom + 4, "coefficient", grid_top=top),
           line(s(0.0), top, s(0.0), bottom + 4, INK, 1, dash=True, opacity=0.6)]
    for k, r in enumerate(rows):
        y = top + row * k + row / 2
        out.append(label(left - 6, y + 4, shorten(r["name"], fits), "end", FONT - 1, tip=r["name"]))
        if fitted is not None:  # under the private marks: a narrow interval must not hide beneath the diamond
            out.append(diamond(s(fitted[r["name"]]), y, 5, ACCENT, f"{r['name']}: θ = {num(fitted[r['name']])}"))
        out.append(span(s(r["low"]), s(r["high"]), y, CHOSEN, 3))
        out.append(dot(s(r["value"]), y, 4, CHOSEN))
    jointly = "all at once" if together else "each on its own"
    keys: list[tuple[str, str, Kind]] = [(f"private value and {level:.0%} interval ({jointly})", CHOSEN, "span")]
    keys += [("θ(P<sub>n</sub>) · not private", ACCENT, "diamond")] if fitted is not None else []
    marks, used = legend(keys, bottom + 60, width)
    values = np.array([r["value"] for r in rows])
    halves = np.array([r["half_width"] for r in rows])
    shown = [bars_in_words("private values", names, values) if len(rows) > 1 else
             f"private value of {names[0]}: {num(values[0])}",
             f"{level:.0%} intervals, {jointly}, ± {num(halves[0])}" if np.all(halves == halves[0]) else
             bars_in_words(f"half-widths of the {level:.0%} intervals, {jointly}", names, halves)]
    if fitted is not None:
        shown.append(bars_in_words("θ(P<sub>n</sub>) · not private", names, np.array([fitted[n] for n in names])))
    return headed(heading, [*out, marks], width, bottom + 56 + used, words(heading, "coefficient", shown))
