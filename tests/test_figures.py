"""The figures of ui.figures, built from small real core results, and the trajectories of core.teaching."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from core import teaching, whatif
from core.accounting import split_budget
from core.compare import compare
from core.data import synthetic
from core.pipeline import make_rng, prepare, run_private
from core.recursion import down_recursion, up_recursion
from ui import figures
from ui.format import num
from ui.theme import ACCENT, CHOSEN, METHOD_LABELS, OTHER

ROOT = Path(__file__).resolve().parents[1]
J = 1  # the coordinate released


@pytest.fixture(scope="module")
def data():
    return synthetic(20_000, 3, "robust", seed=11)


@pytest.fixture(scope="module")
def problem(data):
    return prepare(data.X, data.y, "robust", "cube", feature_names=data.feature_names)


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


# ---------------------------------------------------------------- core.teaching


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
        assert k[0] == 0 and k[-1] == len(path) - 1 == end  # from λmax it ends at N, from λ̂max at m
        # The closed form R^k and k single steps agree to rounding.
        np.testing.assert_allclose(v, np.asarray(path)[k], rtol=1e-12)
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


# ---------------------------------------------------------------- stage 0


def test_theta_figure(problem, data):
    fig = figures.theta_figure(problem, data.theta_star, J)
    bar, star = fig.data
    assert (bar.type, star.type) == ("bar", "scatter")
    assert bar.name == "θ(P<sub>n</sub>) · not private" and star.name == "θ* (generating parameter)"
    assert list(bar.x) == list(problem.feature_names) == list(star.x)
    np.testing.assert_array_equal(values(bar.y), problem.fit.theta)
    np.testing.assert_array_equal(values(star.y), data.theta_star)
    assert list(bar.marker.color) == [CHOSEN if i == J else OTHER for i in range(problem.d)]
    assert fig.layout.yaxis.title.text == "coefficient"
    assert len(figures.theta_figure(problem, None, None).data) == 1  # no θ* for data that have none


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
    assert fig.layout.xaxis.title.text == fig.layout.xaxis2.title.text == "k (recursion steps)"
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


@pytest.mark.parametrize("which", ["min", "max"])
def test_bound_line(run, which):
    b = run.lambda_min if which == "min" else run.lambda_max
    names = figures.eigenvalue_names(which)
    fig = figures.bound_line(b, names)
    assert [list(t.x) for t in fig.data] == [[b.statistic], [b.lambda_hat]]
    assert [list(t.text) for t in fig.data] == [[f"{names[0]} · not private"], [names[1]]]
    assert fig.layout.yaxis.visible is False


# ---------------------------------------------------------------- stage 3


def test_test_figure(run):
    t = run.test
    fig = figures.test_figure(t.value, t.threshold, t.passed)
    (bar,) = fig.data
    assert list(bar.y) == ["threshold", "max(A, B)² − 1"]
    assert list(bar.x) == [t.threshold, t.value]
    assert list(bar.text) == [num(t.threshold), num(t.value)]
    assert list(bar.marker.color)[1] == CHOSEN  # passed
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.title.text == "log scale"
    failed = figures.test_figure(math.nan, t.threshold, False)  # a ratio bound that could not be formed
    assert list(failed.data[0].y) == ["threshold"]
    assert list(figures.test_figure(t.value, t.threshold, False).data[0].marker.color)[1] == ACCENT


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
    assert (fig.layout.xaxis.type, fig.layout.xaxis.title.text) == ("log", "total ε")
    assert (fig.layout.yaxis.type, fig.layout.yaxis.title.text) == ("log", "n")


# ---------------------------------------------------------------- stage 4


def test_density_figure(run):
    r = run.release
    fig = figures.density_figure(r)
    assert [t.name for t in fig.data] == ["density of T · not private", "private interval",
                                          "oracle interval · not private", "T (this draw)",
                                          "u<sup>⊤</sup>θ(P<sub>n</sub>) · not private"]
    curve, private, oracle, draw, target = fig.data
    x, y = values(curve.x), values(curve.y)
    assert x[np.argmax(y)] == pytest.approx(r.u_theta)
    assert np.trapezoid(y, x) == pytest.approx(1.0, abs=1e-3)  # N(uᵀθ, (σω)²) over ±4 sd
    assert list(private.x) == list(r.interval) and list(oracle.x) == list(r.oracle_interval)
    assert list(draw.x) == [r.value, r.value] and list(target.x) == [r.u_theta, r.u_theta]
    assert fig.layout.xaxis.title.text == "T = u<sup>⊤</sup>θ(P<sub>n</sub>) + σωZ"
    assert fig.layout.yaxis.title.text == "density"


def test_release_line(run):
    r = run.release
    fig = figures.release_line(r)
    interval, value = fig.data
    assert interval.name == "95% private interval" and list(interval.x) == list(r.interval)
    assert value.name == "released T" and list(value.x) == [r.value]
    assert list(value.text) == [f"T = {num(r.value)}"]
    assert fig.layout.yaxis.visible is False


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
    assert fig.layout.xaxis.title.text == "released value"


def test_strip_figure_keeps_a_method_that_released_nothing(problem):
    c = compare(problem, J, split_budget(0.05, 1e-6), 2, make_rng(1), ["local", "oracle"])
    assert all(v is None for v in c.methods["local"].values)
    fig = figures.strip_figure(c)
    text, box = fig.data
    assert (text.type, list(text.text)) == ("scatter", ["⊥ in every draw"])
    assert list(text.y) == [f"{METHOD_LABELS['local']} · ⊥ ×2"]
    assert box.name == METHOD_LABELS["oracle"]
    assert len(fig.layout.shapes) == 1  # no θ* given


def test_histogram_of_a_feature(data):
    x = data.X[:, 0]
    fig = figures.histogram(x, "x0", True)
    (bar,) = fig.data
    counts, edges = np.histogram(x, bins=40)
    np.testing.assert_array_equal(values(bar.y), counts)
    np.testing.assert_allclose(values(bar.x), (edges[:-1] + edges[1:]) / 2)
    assert [shape.x0 for shape in fig.layout.shapes] == [-1.0, 1.0]  # the cube's edges
    assert fig.layout.xaxis.title.text == "x0" and fig.layout.yaxis.title.text == "rows"


def test_histogram_of_labels_has_one_bar_per_value():
    y = np.array([-1.0, 1.0, 1.0, -1.0, 1.0])
    fig = figures.histogram(y, "y", False)
    (bar,) = fig.data
    assert list(bar.x) == [-1.0, 1.0] and list(bar.y) == [2, 3]
    assert not fig.layout.shapes
