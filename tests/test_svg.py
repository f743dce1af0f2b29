"""The SVG figures of ui.svg: what they draw, measured back from the drawing; their words; their escaping; and, in
Chromium, that no two pieces of their text overlap."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from test_figures import J, acs_problem, data, problem, run  # noqa: F401  (the figures' fixtures)

from core.data import synthetic
from core.data.acs import FEATURE_NAMES
from core.mechanisms.pipeline import prepare
from ui import svg
from ui.figures import eigenvalue_names
from ui.format import num
from ui.theme import ACCENT, CHOSEN, OTHER

NS = {"s": "http://www.w3.org/2000/svg"}


def tree(sketch: svg.Sketch) -> ET.Element:
    return ET.fromstring(sketch.svg())


def tipped(root: ET.Element, tag: str, start: str) -> list[ET.Element]:
    """The elements of a tag whose tooltip starts with start."""
    return [e for e in root.iter(f"{{{NS['s']}}}{tag}")
            if (t := e.find("s:title", NS)) is not None and t.text.startswith(start)]


def texts(root: ET.Element) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(f"{{{NS['s']}}}text")]


def floats(e: ET.Element, *names: str) -> list[float]:
    return [float(e.get(n)) for n in names]


# ---------------------------------------------------------------- the fit


def test_theta_bars_measure_the_fit(problem, data):  # noqa: F811
    root = tree(svg.theta_figure(problem, data.theta_star, J))
    theta = problem.fit.theta
    bars = [tipped(root, "rect", f"{name}: θ =")[0] for name in problem.feature_names]
    assert [b.get("fill") for b in bars] == [CHOSEN if k == J else OTHER for k in range(problem.d)]
    widths = np.array([float(b.get("width")) for b in bars])
    np.testing.assert_allclose(widths / widths.max(), np.abs(theta) / np.abs(theta).max(), atol=2e-3)
    zero = float(root.find("s:line[@stroke-opacity='0.6']", NS).get("x1"))  # the line at θ = 0
    for b, t in zip(bars, theta, strict=True):  # each bar starts at 0 and goes to its sign's side
        x, w = floats(b, "x", "width")
        assert (x == pytest.approx(zero, abs=0.1)) if t > 0 else (x + w == pytest.approx(zero, abs=0.1))
    stars = [tipped(root, "path", f"{name}: θ* =") for name in problem.feature_names]
    assert all(len(s) == 1 and s[0].get("fill") == ACCENT for s in stars)
    assert "θ* (generating parameter)" in texts(root) and "Coefficient" in texts(root)
    assert f"{problem.feature_names[J]}: the coefficient released" in texts(root)  # the key of the highlighted bar
    bare = tree(svg.theta_figure(problem, None, None))
    assert not tipped(bare, "path", "") and "θ* (generating parameter)" not in texts(bare)
    assert {b.get("fill") for b in tipped(bare, "rect", "")} == {OTHER}
    assert not [t for t in texts(bare) if t.endswith("the coefficient released")]


def test_theta_gives_every_census_feature_a_row(acs_problem, problem):  # noqa: F811
    root = tree(svg.theta_figure(acs_problem, None, 5))
    rows = [e for e in root.iter(f"{{{NS['s']}}}text") if e.find("s:title", NS) is not None]
    assert [e.find("s:title", NS).text for e in rows] == list(FEATURE_NAMES)
    ys = [float(e.get("y")) for e in rows]
    assert np.diff(ys).min() >= 1.5 * svg.FONT  # a row is taller than its label
    small = svg.theta_figure(problem, None, None)
    assert svg.theta_figure(acs_problem, None, 5).height - small.height == 22 * (17 - problem.d)


# ---------------------------------------------------------------- the test (14)


@pytest.mark.parametrize(("ratio", "passed"), [(0.3, True), (1.0, True), (5.3, False), (40.0, False)])
def test_test_bar_is_the_ratio_against_one(ratio, passed):
    root = tree(svg.test_figure(2.0 * ratio, 2.0, passed))
    (bar,) = tipped(root, "rect", "max(A, B)² − 1")
    x, w = floats(bar, "x", "width")
    (one,) = [e for e in root.iter(f"{{{NS['s']}}}line") if e.get("stroke-dasharray")]
    assert w / (float(one.get("x1")) - x) == pytest.approx(ratio, rel=2e-3)
    assert bar.get("fill") == (CHOSEN if passed else ACCENT)
    assert x + w <= 960 - 50  # the bar and its value fit the drawing, however large the ratio
    assert num(ratio) in texts(root) and "1 = threshold" in texts(root)
    assert f"Stability test (14): {'passes' if passed else 'fails'}" in texts(root)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_test_that_could_not_be_formed_draws_no_bar(value):
    sketch = svg.test_figure(value, 0.05, False)
    assert not tipped(tree(sketch), "rect", "")
    assert sketch.alt == ("Stability test (14): fails (left side of (14) ÷ threshold; passes at or below 1). "
                          "Shown: the left side of (14) could not be formed; marked: 1 = threshold.")


# ---------------------------------------------------------------- the release


def test_density_measures_the_release(run):  # noqa: F811
    r = run.release
    root = tree(svg.density_figure(r))
    points = np.array([[float(v) for v in p.split(",")]
                       for p in root.find("s:polyline", NS).get("points").split()])
    lines = {(e.get("stroke"), bool(e.get("stroke-dasharray"))): float(e.get("x1"))
             for e in root.iter(f"{{{NS['s']}}}line") if float(e.get("y1")) == 200.0}
    x_value, x_target = lines[(svg.INK, False)], lines[(svg.GREY, True)]
    assert points[np.argmin(points[:, 1]), 0] == pytest.approx(x_target, abs=0.5)  # the peak is at uᵀθ
    assert points[:, 1].max() == pytest.approx(200.0, abs=0.5)  # the density axis starts at 0
    spans = [e for e in root.iter(f"{{{NS['s']}}}line") if e.get("stroke-width") == "5.0"]
    (lo, hi), (olo, ohi) = [(float(e.get("x1")), float(e.get("x2"))) for e in spans]
    scale = (hi - lo) / (r.interval[1] - r.interval[0])  # pixels per unit, from the private interval
    assert (x_value - x_target) / scale == pytest.approx(r.value - r.u_theta, rel=5e-3, abs=1e-3 / scale)
    assert (ohi - olo) / scale == pytest.approx(r.oracle_interval[1] - r.oracle_interval[0], rel=5e-3)
    assert (lo - x_value) / scale == pytest.approx(r.interval[0] - r.value, rel=5e-3)
    assert ["private", "oracle"] == [t for t in texts(root) if t in ("private", "oracle")]
    words = svg.density_figure(r).alt
    for part in (f"T (this draw) at {num(r.value)}", f"private interval from {num(r.interval[0])} to "
                 f"{num(r.interval[1])}", "density against T"):
        assert part in words, words


def test_release_line_and_bound_line(run):  # noqa: F811
    r, b = run.release, run.lambda_min
    root = tree(svg.release_line(r))
    (span,) = [e for e in root.iter(f"{{{NS['s']}}}line") if e.get("stroke-width") == "6"]
    (dot,) = root.iter(f"{{{NS['s']}}}circle")
    x1, x2, cx = float(span.get("x1")), float(span.get("x2")), float(dot.get("cx"))
    assert (cx - x1) / (x2 - x1) == pytest.approx((r.value - r.interval[0]) / (r.interval[1] - r.interval[0]),
                                                  abs=2e-3)
    assert f"T = {num(r.value)}" in texts(root) and "Released value" in texts(root)
    names = eigenvalue_names("min")
    line = svg.bound_line(b, names)
    stat, bound = sorted(tree(line).iter(f"{{{NS['s']}}}circle"), key=lambda e: e.get("fill") != svg.GREY)
    assert (float(stat.get("cx")) < float(bound.get("cx"))) == (b.statistic < b.lambda_hat)
    assert f"λmin(Pn), not private at {num(b.statistic)}" in line.alt and f"λ̂min at {num(b.lambda_hat)}" in line.alt


@pytest.mark.parametrize(("values", "rows"), [((1.0, 1.0), 2), ((0.0, 0.001, 1.0), 2), ((1.0, 9.0), 1)])
def test_close_points_put_their_names_on_two_rows(values, rows):
    """Names that would meet (equal or nearly equal values) go on two rows; names apart share one."""
    points = [(f"name {k}", v, CHOSEN) for k, v in enumerate(values)]
    root = tree(svg.number_line("points", points))
    assert len({float(e.get("y")) for e in root.iter(f"{{{NS['s']}}}text")
                if "".join(e.itertext()).startswith("name")}) == rows


# ---------------------------------------------------------------- text, ticks, escaping


def test_ticks_are_round_and_written_alike():
    assert svg.ticks(0, 1080) == [0, 200, 400, 600, 800, 1000]
    assert svg.tick_texts(svg.ticks(0, 1080)) == ["0", "200", "400", "600", "800", "1,000"]
    assert svg.tick_texts(svg.ticks(-0.66, 0.8)) == ["−0.50", "−0.25", "0", "0.25", "0.50", "0.75"]
    assert svg.tick_texts(svg.ticks(0.1425, 0.1452)) == ["0.1425", "0.1430", "0.1435", "0.1440", "0.1445", "0.1450"]
    assert svg.tick_texts(svg.ticks(0, 2.5e6)) == ["0", "5e+05", "1e+06", "1.5e+06", "2e+06", "2.5e+06"]
    assert svg.tick_texts(svg.ticks(1e6 - 3, 1e6 + 3)) == [f"{v:.0f}" for v in range(999_997, 1_000_004)]
    for lo, hi in [(0.0, 3e-7), (-7.3, 1e4), (3.0, 3.0000001), (-1e9, -1e8), (1e6, 1e6 + 0.01), (2e-9, 2.00001e-9)]:
        values = svg.ticks(lo, hi)
        assert 3 <= len(values) <= 11 and lo - 1e-12 <= values[0] and values[-1] <= hi + 1e-12
        assert len(set(svg.tick_texts(values))) == len(values)  # distinct labels


def test_markup_and_hostile_names_are_escaped():
    assert svg.rich("λ<sub>min</sub>") == 'λ<tspan baseline-shift="sub" font-size="75%">min</tspan>'
    names = ('<script>alert(1)</script>', 'a & "b"', "$x$ *y*", "line\nbreak", "cr\r\n\r\n[x](y)\x01")
    d = synthetic(2_000, len(names), "robust", seed=1)
    p = prepare(d.X, d.y, "robust", "cube", feature_names=names)
    sketch = svg.theta_figure(p, None, 0)
    root = tree(sketch)  # well-formed XML: nothing of the names escaped the text
    assert not list(root.iter("script")) and not list(root.iter(f"{{{NS['s']}}}script"))
    assert [e.find("s:title", NS).text for e in root.iter(f"{{{NS['s']}}}text")
            if e.find("s:title", NS) is not None] == [re.sub(r"[\x00-\x1f]", " ", n) for n in names]
    page = sketch.html()
    assert "<script>" not in page and "$" not in page and not re.search(r"[\x00-\x1f]", page)


def test_presentation_draws_a_figure_for_each_band_of_widths(problem, data, run):  # noqa: F811
    """One drawing per band of container widths, each 2/3 of its band's narrowest container (a tick's 12 px shows
    at 18 px or more), the same marks in each; a title too long for a drawing takes two lines, the rest moved down."""
    assert svg.PRESENTING_WIDTHS == (500, 625, 781, 977, 1221) and svg.PRESENTING_SCALE == 1.5
    for draw, args in ((svg.theta_figure, (problem, data.theta_star, J)), (svg.density_figure, (run.release,))):
        wide, *narrow = [draw(*args)] + [draw(*args, width=w) for w in svg.PRESENTING_WIDTHS]
        assert [n.width for n in narrow] == list(svg.PRESENTING_WIDTHS) and {n.alt for n in narrow} == {wide.alt}
        assert {marks(n) for n in narrow} == {marks(wide)}
        page = svg.fitted(narrow)
        assert page.startswith('<div class="psp-figure"><div class="psp-fit">') and page.count("<svg") == 5
        assert [int(k) for k in re.findall(r'class="psp-band-(\d)"', page)] == [0, 1, 2, 3, 4]
    heading = "The release T: its density, this draw and the two intervals"
    assert svg.title_lines(heading, 960) == [heading]
    assert svg.title_lines(heading, 500) == ["The release T: its density, this draw and the two", "intervals"]
    one, two = (svg.number_line(heading, [("T", 1.0, CHOSEN)], "value", width=w) for w in (960, 500))
    assert texts(tree(two))[:2] == ["The release T: its density, this draw and the two", "intervals"]
    assert (one.height, two.height) == (144, 144 + svg.LINE) and f'transform="translate(0 {svg.LINE})"' in two.body


def marks(sketch: svg.Sketch) -> int:
    """The elements a figure draws, but for its title's lines and the group that moves the rest below them."""
    drawn = [e for e in tree(sketch).iter() if e.tag != f"{{{NS['s']}}}g"]
    return len(drawn) - len(svg.title_lines(sketch.title, sketch.width))


def test_a_downloaded_file_carries_its_own_colours(run):  # noqa: F811
    file = svg.density_figure(run.release).svg(standalone=True)
    assert "color:#31333F;background:#FFFFFF" in file and "max-width" not in file
    assert ET.fromstring(file).find("s:title", NS).text.startswith("The release T")


# ---------------------------------------------------------------- drawn in Chromium

BOXES = """() => [...document.querySelectorAll('svg text')].map(e => {
  const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, e.textContent]; })"""


def overlap(a, b, slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


@pytest.mark.parametrize("width", [svg.WIDTH, *svg.PRESENTING_WIDTHS])
def test_no_two_labels_overlap_when_drawn(browser, width, acs_problem, problem, data, run):  # noqa: F811
    """Every figure, as the page draws it in an 860-pixel card: no two texts meet, and none leaves the drawing."""
    r, b = run.release, run.lambda_max
    sketches = [svg.theta_figure(acs_problem, None, 5, width), svg.theta_figure(problem, data.theta_star, J, width),
                svg.density_figure(r, width), svg.release_line(r, width),
                svg.bound_line(b, eigenvalue_names("max"), width),
                svg.number_line("close", [("λ<sub>max</sub>(P<sub>n</sub>) · not private", 1.0, svg.GREY),
                                          ("λ̂<sub>max</sub>", 1.0, CHOSEN)], width=width)]
    sketches += [svg.test_figure(v, 1.0, v <= 1, width) for v in (0.6, 1.0, 5.3, 40.0, math.nan)]
    tab = browser.new_page(viewport={"width": 900, "height": 800})
    try:
        for sketch in sketches:
            tab.set_content(f'<div style="width:860px;font-family:sans-serif">{sketch.html()}</div>')
            boxes = tab.evaluate(BOXES)
            frame = tab.evaluate("(() => { const r = document.querySelector('svg').getBoundingClientRect();"
                                 " return [r.left, r.top, r.right, r.bottom]; })()")
            for i, a in enumerate(boxes):
                assert frame[0] - 0.5 <= a[0] and a[2] <= frame[2] + 0.5, (sketch.title, a)
                assert frame[1] - 0.5 <= a[1] and a[3] <= frame[3] + 0.5, (sketch.title, a)
                for other in boxes[i + 1:]:
                    assert not overlap(a, other), (sketch.title, a, other)
    finally:
        tab.close()
