"""The figures of ui.figures, built from small real core results, and the trajectories of core.teaching.aids."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from core.data import synthetic
from core.data.acs import FEATURE_NAMES
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.recursion import down_recursion, up_recursion
from core.methods.compare import compare
from core.privacy.accounting import make_budget, privacy_profile, split_budget
from core.teaching import aids as teaching
from core.teaching import whatif
from ui import figures
from ui.format import num
from ui.theme import BACKGROUNDS, DARK_COLORS, METHOD_LABELS

ROOT = Path(__file__).resolve().parents[1]
J = 1  # the coordinate released


@pytest.fixture(scope="module")
def data():
    return synthetic(20_000, 3, "robust", seed=11)


@pytest.fixture(scope="module")
def problem(data):
    return prepare(data.X, data.y, "robust", "cube", feature_names=data.feature_names)


@pytest.fixture(scope="module")
def acs_problem():
    """A problem with the census data's 17 feature names (the values are synthetic: only the labels matter)."""
    d = synthetic(5_000, len(FEATURE_NAMES), "robust", seed=3)
    return prepare(d.X, d.y, "robust", "cube", feature_names=FEATURE_NAMES)


@pytest.fixture(scope="module")
def run(problem):
    """A seeded run on which the test (14) passes, so every stage and both intervals exist."""
    out = run_private(problem, J, split_budget(4.0, 1e-6), make_rng(5), "paper", 0.95)
    assert out.release.status == "released" and out.lambda_max is not None
    return out


def values(xs) -> np.ndarray:
    return np.asarray(xs, dtype=float)


def iterate(step, start: float, done) -> list[float]:
    """start, R(start), R(R(start)), ... up to and including the first iterate for which done holds."""
    out = [start]
    while len(out) == 1 or not done(out[-1]):
        out.append(step(out[-1]))
    return out


# ---------------------------------------------------------------- core.teaching.aids


def test_falling_path_iterates_the_decreasing_recursion(problem, run):
    f = problem.fit
    down = down_recursion(problem.geometry, f.n, f.lam_reg)
    for start, end in ((f.lambda_min, run.lambda_min.N), (run.lambda_min.lambda_hat, run.lambda_min.m)):
        path = iterate(down.step, start, lambda x: x <= 0)
        k, v = teaching.falling_path(problem, start)
        assert k[0] == 0 and k[-1] == len(path) - 1 == end  # from λmin it ends at N, from λ̂min at m
        np.testing.assert_array_equal(v, np.asarray(path)[k])
        assert v[-1] == 0 and np.all(v[:-1] > 0)


def test_rising_path_iterates_the_increasing_recursion(problem, run):
    f = problem.fit
    lam_hat_min = run.lambda_min.lambda_hat
    up = up_recursion(lam_hat_min, problem.geometry, f.n, f.lam_reg)
    b = run.lambda_max
    for start, end in ((b.statistic, b.N), (b.lambda_hat, b.m)):
        path = iterate(up.step, start, lambda x: x >= up.cap)
        k, v = teaching.rising_path(problem, lam_hat_min, start)
        assert k[0] == 0 and k[-1] == end  # from λmax it ends at N, from λ̂max at m
        # The closed form R^k and k single steps agree to rounding, so they reach the cap within one step.
        assert abs(len(path) - 1 - end) <= 1
        np.testing.assert_allclose(v[:-1], np.asarray(path)[k[:-1]], rtol=1e-12)
        assert v[0] == start and v[-1] == up.cap


@pytest.mark.parametrize("length", [1, 2, 50, teaching.MAX_POINTS + 7, 100_000])
def test_thinning_keeps_the_first_and_last_steps_and_the_end_in_full(length):
    path = list(np.linspace(1.0, 0.0, length))
    k, v = teaching.thin(path)
    last = length - 1
    assert k[0] == 0 and k[-1] == last
    assert np.all(np.diff(k) > 0)
    np.testing.assert_array_equal(v, np.asarray(path)[k])
    assert set(range(max(0, last - teaching.ZOOM), last + 1)) <= set(k.tolist())  # the close-up, every step
    assert k.size <= teaching.MAX_POINTS + teaching.ZOOM + 1
    if length <= teaching.MAX_POINTS:
        np.testing.assert_array_equal(k, np.arange(length))


def test_whatif_grid_spans_50d_to_the_largest_n(problem):
    ns = teaching.whatif_n_grid(problem)
    assert ns[0] == 50 * problem.d and ns[-1] == teaching.WHATIF_N_MAX == whatif.N_MAX
    assert np.all(np.diff(ns) > 0)
    assert np.diff(np.log10(ns)).max() <= 1 / teaching.WHATIF_N_PER_DECADE  # a log grid, as fine as stated


def test_pages_and_ui_leave_the_recursions_to_core_teaching():
    sources = [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py")]
    assert sources
    for path in sources:
        assert not re.search(r"core\.recursion|from core import .*\brecursion\b", path.read_text()), path


# ---------------------------------------------------------------- stages 1 and 2


def staircase_checks(fig, true_path, hat_path, b, which: str) -> None:
    names = figures.eigenvalue_names(which)
    expected = [f"from {names[0]} · not private", f"from {names[1]}", "N · not private", "N̂", "m = ⌊N̂ − k⌋"]
    assert [t.name for t in fig.data] == expected * 2  # every step, then the close-up
    assert [t.showlegend for t in fig.data] == [True] * 5 + [False] * 5
    assert [t.xaxis for t in fig.data] == ["x"] * 5 + ["x2"] * 5
    lo, hi = fig.layout.xaxis2.range
    for trace, (k, v) in zip(fig.data[:2], (true_path, hat_path), strict=True):
        np.testing.assert_array_equal(values(trace.x), k)
        np.testing.assert_array_equal(values(trace.y), v)
    for trace, (k, v) in zip(fig.data[5:7], (true_path, hat_path), strict=True):  # the close-up: its window only
        first = int(np.flatnonzero(k >= lo)[0])
        np.testing.assert_array_equal(values(trace.x), k[max(first - 1, 0):])
        np.testing.assert_array_equal(values(trace.y), v[max(first - 1, 0):])
    for offset in (0, 5):
        for trace, x in zip(fig.data[offset + 2:offset + 5], (b.N, b.N_hat, b.m), strict=True):
            assert list(trace.x) == [x, x]
    assert fig.data[0].x[-1] == b.N and fig.data[1].x[-1] == b.m  # the staircases end where the counts say
    assert lo < min(b.N, b.N_hat, b.m) and max(b.N, b.N_hat, b.m) < hi
    assert fig.layout.xaxis.title.text == fig.layout.xaxis2.title.text == "Recursion steps k"
    assert fig.layout.yaxis.title.text == "R<sup>k</sup>(λ)"


def test_lambda_min_staircase(problem, run):
    b = run.lambda_min
    true_path = teaching.falling_path(problem, problem.fit.lambda_min)
    hat_path = teaching.falling_path(problem, b.lambda_hat)
    fig = figures.staircase(true_path, hat_path, b, figures.eigenvalue_names("min"))
    staircase_checks(fig, true_path, hat_path, b, "min")


def test_lambda_max_staircase(problem, run):
    b, lam_hat_min = run.lambda_max, run.lambda_min.lambda_hat
    true_path = teaching.rising_path(problem, lam_hat_min, b.statistic)
    hat_path = teaching.rising_path(problem, lam_hat_min, b.lambda_hat)
    fig = figures.staircase(true_path, hat_path, b, figures.eigenvalue_names("max"))
    staircase_checks(fig, true_path, hat_path, b, "max")


def test_log_edges_are_geometric_midpoints():
    grid = np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(figures.log_edges(grid), [10**-0.5, 10**0.5, 10**1.5, 10**2.5])


def test_region_figure(problem, run):
    ns, eps = teaching.whatif_n_grid(problem)[:3], teaching.WHATIF_EPS[::3]
    passes = whatif.pass_region(problem, 1e-6, (1.0, 1.0, 1.0), ns, eps)
    fig = figures.region_figure(ns, eps, passes, problem.n, 4.0)
    heat, star = fig.data
    np.testing.assert_array_equal(np.asarray(heat.z), passes.astype(int))
    np.testing.assert_allclose(values(heat.x), figures.log_edges(eps))
    np.testing.assert_allclose(values(heat.y), figures.log_edges(ns))
    assert list(star.x) == [4.0] and list(star.y) == [problem.n] and star.name == "this sample and ε"
    assert (fig.layout.xaxis.type, fig.layout.xaxis.title.text) == ("log", "Total ε")
    assert (fig.layout.yaxis.type, fig.layout.yaxis.title.text) == ("log", "Sample size n")
    low, high = (10**v for v in fig.layout.yaxis.range)  # its n ticks in full, inside the range drawn
    assert 2 <= len(fig.layout.yaxis.tickvals) <= 5 and all(low <= v <= high for v in fig.layout.yaxis.tickvals)
    assert list(fig.layout.yaxis.ticktext) == [f"{v:,.0f}" for v in fig.layout.yaxis.tickvals]


def test_numbers_have_three_digits_in_presentation_mode(monkeypatch):
    """num and its siblings (the figures' words, the metrics, the sentences): three significant digits for a room,
    trailing zeros kept but no bare point; their own digits otherwise."""
    from ui import format as fmt

    monkeypatch.setattr(fmt, "presenting", lambda: True)
    assert [fmt.num(x) for x in (-0.233637, 100.0, 3.3516e-08, 0.15)] == ["-0.234", "100", "3.35e-08", "0.150"]
    assert [fmt.percent(x) for x in (0.8808, 1.0, 0.005)] == ["88.1%", "100%", "0.500%"]
    assert (fmt.fixed(12.346, 2), fmt.num(8.65712, 4), fmt.percent(0.8808, sep=" ")) == ("12.3", "8.66", "88.1 %")
    monkeypatch.setattr(fmt, "presenting", lambda: False)
    assert (fmt.num(-0.233637), fmt.num(8.65712, 4), fmt.fixed(12.346, 2)) == ("-0.233637", "8.657", "12.35")
    assert (fmt.percent(0.8808), fmt.percent(1.0, sep=" ")) == ("88.1%", "100.0 %")


def test_log_ticks_are_round_and_few():
    """1-2-5, 1-3 or 1 per decade, the densest that keeps to `most`; within a decade, the ends to two digits."""
    assert figures.log_ticks(150, 900) == dict(tickvals=[200.0, 500.0], ticktext=["200", "500"])
    assert figures.log_ticks(1_000, 100_000)["ticktext"] == ["1,000", "3,000", "10,000", "30,000", "100,000"]
    assert figures.log_ticks(2e-3, 0.4)["ticktext"] == ["0.003", "0.01", "0.03", "0.1", "0.3"]
    assert figures.log_ticks(300, 2e6)["tickvals"] == [1e3, 1e4, 1e5, 1e6]
    assert figures.log_ticks(10, 1e9)["tickvals"] == [10.0, 1e3, 1e5, 1e7, 1e9]  # every other decade
    assert figures.log_ticks(3_000, 4_500)["ticktext"] == ["3,000", "3,700", "4,500"]


# ---------------------------------------------------------------- Compare and Data


def test_strip_figure(problem, data):
    c = compare(problem, J, split_budget(4.0, 1e-6), 3, make_rng(1), ["oracle", "output_perturbation"],
                data.theta_star)
    fig = figures.strip_figure(c)
    assert [t.type for t in fig.data] == ["box", "box"]
    for trace, (name, m) in zip(fig.data, c.methods.items(), strict=True):
        assert trace.name == METHOD_LABELS[name]
        np.testing.assert_array_equal(values(trace.x), values(m.values))
    assert [shape.x0 for shape in fig.layout.shapes] == [c.u_theta, c.u_theta_star]
    assert fig.layout.xaxis.title.text == "Released value"


def test_strip_figure_keeps_a_method_that_released_nothing(problem):
    c = compare(problem, J, split_budget(0.05, 1e-6), 2, make_rng(1), ["local", "oracle"])
    assert all(v is None for v in c.methods["local"].values)
    fig = figures.strip_figure(c)
    text, box = fig.data
    assert (text.type, list(text.text)) == ("scatter", ["⊥ in every draw"])
    assert list(text.y) == [f"{METHOD_LABELS['local']} · ⊥ ×2"]
    assert box.name == METHOD_LABELS["oracle"]
    assert len(fig.layout.shapes) == 1  # no θ* given


def test_strip_figure_names_a_far_theta_star_at_the_edge(problem):
    """θ* far from every draw is named at the chart's edge instead of stretching its axis to reach it."""
    c = compare(problem, J, split_budget(4.0, 1e-6), 3, make_rng(1), ["oracle"], np.full(problem.d, 1e3))
    fig = figures.strip_figure(c)
    assert [shape.x0 for shape in fig.layout.shapes] == [c.u_theta]
    (edge,) = [a for a in fig.layout.annotations if a.xref == "paper"]
    assert edge.x == 1.0 and edge.text.endswith("→") and "1000" in edge.text


def test_histogram_of_a_feature(data):
    x = data.X[:, 0]
    fig = figures.histogram(x, "x0", True)
    (bar,) = fig.data
    counts, edges = np.histogram(x, bins=40)
    np.testing.assert_array_equal(values(bar.y), counts)
    np.testing.assert_allclose(values(bar.x), (edges[:-1] + edges[1:]) / 2)
    assert [shape.x0 for shape in fig.layout.shapes] == [-1.0, 1.0]  # the cube's edges
    assert fig.layout.xaxis.title.text == "x0" and fig.layout.yaxis.title.text == "Rows"


def test_histogram_of_labels_has_one_bar_per_value():
    y = np.array([-1.0, 1.0, 1.0, -1.0, 1.0])
    fig = figures.histogram(y, "y", False)
    (bar,) = fig.data
    assert list(bar.x) == [-1.0, 1.0] and list(bar.y) == [2, 3]
    assert not fig.layout.shapes


# ---------------------------------------------------------------- the privacy profile


@pytest.fixture(scope="module")
def profile():
    return privacy_profile(make_budget(4.0, 1e-6))


def test_profile_figure(profile):
    fig = figures.profile_figure(profile)
    basic, pld, chosen = fig.data
    for trace, delta in ((basic, profile.delta_basic), (pld, profile.delta_pld)):
        assert list(trace.x) == list(profile.epsilon) and list(trace.y) == list(delta)
    assert basic.name == "basic composition (Lemma 2.5)"
    assert pld.name == "privacy-loss distributions (dp_accounting)"
    assert (list(chosen.x), list(chosen.y)) == ([4.0], [1e-6]) and chosen.name == "the chosen (ε, δ)"
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.title.text == "ε"
    assert fig.layout.title.text == "Privacy profile δ(ε) of this release"


# ---------------------------------------------------------------- titles, words and themes


@pytest.fixture(scope="module")
def every_figure(problem, data, run, profile):
    """Every figure of ui.figures on the module's run, by name."""
    b = run.lambda_min
    ns, eps = teaching.whatif_n_grid(problem)[:3], teaching.WHATIF_EPS[::3]
    c = compare(problem, J, split_budget(4.0, 1e-6), 3, make_rng(1), ["oracle", "output_perturbation"],
                data.theta_star)
    return {
        "staircase": figures.staircase(
            teaching.falling_path(problem, problem.fit.lambda_min), teaching.falling_path(problem, b.lambda_hat), b,
            figures.eigenvalue_names("min")),
        "region": figures.region_figure(ns, eps, whatif.pass_region(problem, 1e-6, (1.0, 1.0, 1.0), ns, eps),
                                        problem.n, 4.0),
        "strip": figures.strip_figure(c),
        "histogram": figures.histogram(data.X[:, 0], "x0", True),
        "profile": figures.profile_figure(profile),
    }


def test_every_figure_has_a_title(every_figure):
    for name, fig in every_figure.items():
        title = fig.layout.title
        assert title.text and title.xanchor == "left", name  # left: the toolbar sits at the right


def test_alt_text_names_the_title_and_the_key_values(every_figure, run, profile, problem):
    b = run.lambda_min
    expected = {  # a few values each figure's description must carry, written as the app writes numbers
        "staircase": [f"N, not private at {b.N}", f"m = ⌊N̂ − k⌋ at {b.m}"],
        "region": ["a 3 × 4 grid", f"this sample and ε at 4, {problem.n}"],
        "strip": ["Oracle, not private: 3 values", "marked: uTθ(Pn), not private, uTθ*"],
        "histogram": ["x0: 40 bars", "Rows against x0"],
        "profile": ["δ(ε) (log scale) against ε", "the chosen (ε, δ) at 4, 1e-06",
                    f"from {num(min(profile.delta_pld))} to {num(max(profile.delta_pld))}"],
    }
    for name, fig in every_figure.items():
        text = figures.alt_text(fig)
        assert text.startswith(figures.plain(fig.layout.title.text)), name
        assert "<" not in text and text.count(". ") <= 1 and text.endswith("."), text  # plain, two sentences
        for part in expected[name]:
            assert part in text, (name, part, text)


def test_plain_text_of_plotly_labels():
    assert figures.plain("u<sup>⊤</sup>θ(P<sub>n</sub>) · not private") == "u⊤θ(Pn), not private"
    assert figures.plain(None) == "" and figures.plain("a<br>b") == "a b"


def luminance(color: str) -> float:
    """WCAG 2 relative luminance of #RRGGBB."""
    channels = [int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def colors_in(spec: object) -> set[str]:
    """Every #RRGGBB string in a figure's dict, outside its template."""
    if isinstance(spec, str):
        return {spec.upper()} if re.fullmatch(r"#[0-9A-Fa-f]{6}", spec) else set()
    if isinstance(spec, dict):
        return set().union(*(colors_in(v) for k, v in spec.items() if k != "template"))
    if isinstance(spec, (list, tuple)):
        return set().union(*(colors_in(v) for v in spec))
    return set()


def test_contrast_is_the_wcag_ratio():
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert contrast("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)


def test_dark_theme_keeps_every_mark_readable(every_figure):
    """In the dark theme every colour drawn reaches WCAG's 3:1 for graphics against the dark background."""
    for name, fig in every_figure.items():
        before = fig.to_dict()
        dark = figures.themed(fig, "dark")
        assert fig.to_dict() == before, name  # pure: the original is untouched
        used = colors_in(dark.to_dict())
        assert used and not used & {c.upper() for c in DARK_COLORS}, name
        for color in used:
            assert contrast(color, BACKGROUNDS["dark"]) >= 3, (name, color)
        assert len(dark.data) == len(fig.data) and dark.layout.title.text == fig.layout.title.text


def test_light_theme_darkens_only_the_text(every_figure):
    """Streamlit's light chart theme writes a chart's text in a grey of 3.7:1 on white: the light theme keeps every
    mark and sets the text (layout, legend, axes, uncoloured annotations) in LIGHT_TEXT, at least 4.5:1 (WCAG AA)."""
    channel = [int(figures.LIGHT_TEXT[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lum = sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
              for w, c in zip((0.2126, 0.7152, 0.0722), channel, strict=True))
    assert 1.05 / (lum + 0.05) >= 4.5
    for theme in ("light", None):
        for fig in every_figure.values():
            light = figures.themed(fig, theme)
            assert light.to_dict()["data"] == fig.to_dict()["data"]
            assert light.layout.font.color == light.layout.legend.font.color == figures.LIGHT_TEXT
            axes = [a for k in light.layout if k.startswith(("xaxis", "yaxis")) and (a := light.layout[k])]
            assert axes and all(a.tickfont.color == a.title.font.color == figures.LIGHT_TEXT for a in axes)
            assert all(a.font.color is not None for a in light.layout.annotations)


def test_dark_theme_swaps_only_the_dark_marks(every_figure):
    """The strip chart's uᵀθ line (dark grey) and θ* line (black) turn light; its methods' colours stay."""
    fig = every_figure["strip"]
    dark = figures.themed(fig, "dark")
    assert [shape.line.color for shape in dark.layout.shapes] == [DARK_COLORS["#555555"], DARK_COLORS["#000000"]]
    assert [t.marker.color for t in dark.data] == [t.marker.color for t in fig.data]


# ---------------------------------------------------------------- drawn: labels and legends in a real browser

MEASURE = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const all = sel => [...document.querySelectorAll(sel)].map(box);
  return {yticks: all('g.ytick text'), xticks: all('g.xtick text'), titles: all('g.infolayer g[class$="title"] text'),
          legend: all('g.legend'), notes: all('g.annotation text'), svg: box(document.querySelector('svg.main-svg'))};
}"""


def as_in_a_card(fig, height: int, top: int = 30):
    """The layout ui.cards.chart gives a chart: small margins and the legend below the plot."""
    out = go.Figure(fig)
    out.update_layout(height=height, width=700, margin=dict(l=10, r=10, t=top, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.25, xanchor="left", x=0.0))
    return out


def overlap(a, b, slack: float = 0.5) -> bool:
    return a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack


def drawn(browser, fig) -> dict:  # noqa: F811
    tab = browser.new_page(viewport={"width": 760, "height": int(fig.layout.height) + 40})
    try:
        tab.set_content(fig.to_html(include_plotlyjs=True, full_html=True, config={"displayModeBar": False}))
        tab.wait_for_selector("g.infolayer", state="attached")
        return tab.evaluate(MEASURE)
    finally:
        tab.close()


def check_layout(boxes: dict) -> None:
    """Tick labels apart from each other, and the legend clear of every label, title and tick, inside the chart."""
    (legend,) = boxes["legend"]
    labels = boxes["yticks"] + boxes["xticks"] + boxes["titles"]
    assert labels
    for label in labels:
        assert not overlap(label, legend), (label, legend)
    ys = sorted(boxes["yticks"], key=lambda b: b[1])
    for upper, lower in zip(ys, ys[1:], strict=False):
        assert upper[3] <= lower[1] + 0.5, (upper, lower)  # category labels one above the other, not on top
    svg = boxes["svg"]
    assert svg[1] <= legend[1] and legend[3] <= svg[3] + 0.5  # not cut off at the bottom


def test_staircase_labels_clear_the_legend(browser, problem, run):  # noqa: F811
    b = run.lambda_min
    fig = figures.staircase(teaching.falling_path(problem, problem.fit.lambda_min),
                            teaching.falling_path(problem, b.lambda_hat), b, figures.eigenvalue_names("min"))
    assert fig.layout.height == 400
    check_layout(drawn(browser, as_in_a_card(fig, fig.layout.height, top=60)))


# ---------------------------------------------------------------- the two themes of .streamlit/config.toml

OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"}


def test_config_has_a_light_and_a_dark_theme_on_one_palette():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    light, dark = config["theme"], config["theme"]["dark"]
    assert light["backgroundColor"] == BACKGROUNDS["light"] and dark["backgroundColor"] == BACKGROUNDS["dark"]
    for theme in (light, dark):
        assert theme["primaryColor"] in OKABE_ITO
        assert contrast(theme["primaryColor"], theme["backgroundColor"]) >= 4.5  # WCAG AA for text and controls
        assert contrast(theme["textColor"], theme["backgroundColor"]) >= 7  # AAA for body text
    assert set(light["chartCategoricalColors"]) <= OKABE_ITO
    assert config["server"]["maxUploadSize"] == 300 and config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False


def test_streamlit_reads_every_theme_key():
    """Streamlit knows each key of the file (a misspelt one would be ignored with only a warning in the log)."""
    from streamlit import config as st_config

    known = st_config._config_options_template
    parsed = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())

    def keys(table: dict, prefix: str) -> list[str]:
        return [k for name, v in table.items()
                for k in (keys(v, f"{prefix}{name}.") if isinstance(v, dict) else [f"{prefix}{name}"])]

    for key in keys(parsed, ""):
        assert key in known, key


def test_alt_text_of_empty_traces():
    """A trace with no points (every planned n failing, say) is described, never an error."""
    fig = go.Figure([go.Scatter(x=[], y=[], name="half-width"), go.Scatter(x=[1.0, 2.0, 3.0], y=[], name="⊥")])
    fig.update_layout(title="Planner")
    text = figures.alt_text(fig)
    assert "half-width: nothing to draw" in text and "⊥ over 1 to 3" in text


def test_the_dark_theme_keeps_every_array_and_its_description():
    """Plotly encodes NumPy arrays as {dtype, bdata} in to_dict: the dark copy decodes them, so its traces hold the
    same numbers and read the same in words as the light figure (they read "nothing to draw", and a description of
    a dict raised a TypeError on screen)."""
    fig = go.Figure(go.Scatter(x=np.arange(5.0), y=np.linspace(1.0, 9.0, 5), name="s", line=dict(color="#000000")))
    fig.add_trace(go.Heatmap(z=(np.arange(12.0).reshape(3, 4) > 5).astype(float)))
    fig.add_trace(go.Bar(x=np.array([3.0, 1.0]), y=["a", "b"], orientation="h", name="b"))
    light, dark = figures.themed(fig, "light"), figures.themed(fig, "dark")
    for a, b in zip(light.data, dark.data, strict=True):
        assert figures.describe_trace(a) == figures.describe_trace(b)
        assert "nothing to draw" not in figures.describe_trace(b)
    np.testing.assert_array_equal(np.asarray(dark.data[1].z), np.asarray(light.data[1].z))
    assert dark.data[0].line.color.upper() == "#F0F0F0"  # black marks turn light


def test_the_planners_figure_has_a_title_and_keeps_bottom_off_the_half_width_axis():
    from core.teaching.planner import Assumptions, plan, sweep_n
    from ui.figures import alt_text
    from ui.planner_figures import half_width_figure

    a = Assumptions(n=20_000, d=3, lambda_min=0.1, lambda_max=0.3, epsilon=4.0, delta=1e-6)
    plans = sweep_n(a)
    assert any(p.half_width is None for p in plans) and any(p.half_width is not None for p in plans)
    fig = half_width_figure(plans, plan(a), 0.01)
    assert fig.layout.title.text.startswith("Planned half-width")
    (bottom,) = [t for t in fig.data if t.name.startswith("test (14) fails")]
    assert bottom.yaxis == "y2" and fig.layout.yaxis2.overlaying == "y"  # a band of its own, not a half-width
    text = alt_text(fig)
    assert "test (14) fails: ⊥, no interval over" in text and not re.search(r"from (\S+) to \1\b", text)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):  # ticks written out, not Plotly's small 2s and 5s
        assert len(axis.tickvals) >= 2 and len(axis.ticktext) == len(axis.tickvals)


def test_the_games_points_are_not_clipped_at_the_squares_edge():
    """A guesser who always says "in" sits at FPR 1: its star must show whole, not cut by the plot's edge."""
    from core.teaching.attack import GameScore
    from ui.attack_figures import game_figure

    score = GameScore(tp=5, fn=0, fp=5, tn=0, epsilon=1.0, delta=1e-6, epsilon_lb=0.0)
    (star,) = [t for t in game_figure(score).data if t.name.startswith("your guesses")]
    assert (list(star.x), star.cliponaxis) == ([1.0], False)


def test_the_pairs_privacy_loss_is_cut_where_it_is_rounding():
    """A pair's δ(ε) from the accountant sits near 5e-16 once its true value is 0: that tail is not drawn as a loss,
    and a note says where the curve ends."""
    from types import SimpleNamespace

    from ui.attack_sketches import BASE, ROUNDING, loss_sketch, pair_curve

    eps = np.linspace(0.0, 5.0, 51)
    deltas = np.where(eps < 2.6, np.exp(-4 * eps) * 0.5, 5e-16)
    loss = SimpleNamespace(epsilons=eps, deltas=deltas)
    profile = SimpleNamespace(epsilon=eps, delta_basic=np.exp(-eps), epsilon_chosen=4.0, delta_chosen=1e-6)
    pair = pair_curve(loss)
    assert np.all(np.isnan(pair[eps >= 2.6])) and np.all(pair[eps < 2.6] > ROUNDING)
    drawn = loss_sketch(loss, profile)
    assert "δ is 0 beyond ε ≈ 2.6" in drawn.body and "δ is 0 beyond ε ≈ 2.6" in drawn.alt
    # The pair's curve is one polyline of the 26 points below ε = 2.6 (the guarantee's has all 51).
    counts = sorted(len(m.split()) for m in re.findall(r'<polyline points="([^"]*)"', drawn.body))
    assert counts == [26, 51]
    loss.deltas = np.full_like(eps, 5e-16)  # a branch where nothing released depends on the row
    drawn = loss_sketch(loss, profile)
    assert "this pair&#x27;s δ(ε) is 0 at every ε" in drawn.body and drawn.body.count("<polyline") == 1
    # The note stands below the legend, clear of the curves: its baseline under the x axis's values and name.
    note = re.search(r'<text x="8.0" y="([\d.]+)"[^>]*>this pair', drawn.body)
    assert note is not None and float(note.group(1)) > BASE + 58
