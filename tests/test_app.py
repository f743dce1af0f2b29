"""The pipeline page, driven through Streamlit's AppTest from the app's entry point."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

import core.pipeline
from core.accounting import split_budget
from core.data import synthetic
from core.pipeline import make_rng, prepare, run_private

APP = Path(__file__).resolve().parents[1] / "app.py"
N = 20_000  # small enough to keep every run fast


def start(**widgets: object) -> AppTest:
    """Run the app once with n = N, then set the given widgets (by key) and run again."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.number_input(key="n").set_value(N)
    for key, value in widgets.items():
        widget_of(at, key).set_value(value)
    return at.run()


def widget_of(at: AppTest, key: str):
    """The input widget with this key, whatever its kind."""
    for kind in ("number_input", "radio", "selectbox", "slider"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0]
    raise KeyError(key)


def metrics(at: AppTest, label_start: str) -> list[str]:
    """The shown values of every metric whose label starts with label_start."""
    return [m.value for m in at.metric if m.label.startswith(label_start)]


def metric(at: AppTest, label_start: str) -> str:
    (value,) = metrics(at, label_start)
    return value


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_page_renders():
    at = start()
    assert_clean(at)
    assert not at.error
    assert len(at.metric) > 20
    assert any("Stage 0" in m.value for m in at.markdown)


def test_released_value_matches_core():
    seed, eps = 7, 8.0
    at = start(epsilon=eps, noise_seed=seed, coordinate="x2")
    assert_clean(at)
    data = synthetic(N, 5, "robust", 1.0, 1.0, 0)
    problem = prepare(data.X, data.y, "robust", "cube", None, 0.0, data.feature_names)
    run = run_private(problem, 2, split_budget(eps, 1e-6), make_rng(seed), "paper", 0.95)
    assert run.release.status == "released"
    assert float(metric(at, "Released value")) == pytest.approx(run.release.value, rel=1e-5)


def test_seed_replays_and_no_seed_draws_fresh_noise():
    at = start(noise_seed=3)
    first = metric(at, "Gaussian draw")
    at.run()
    assert metric(at, "Gaussian draw") == first
    at.number_input(key="noise_seed").set_value(None).run()
    first = metrics(at, "Laplace draw")
    at.button(key="fresh_noise").click().run()
    assert metrics(at, "Laplace draw") != first


def test_not_private_numbers_are_marked():
    at = start(noise_seed=1, epsilon=8.0)
    marked = {m.label.split(" :")[0] for m in at.metric if "not private" in m.label}
    plain = {m.label for m in at.metric if "not private" not in m.label}
    assert {
        "$N$", "Laplace draw", "$\\lambda_{\\min}(P_n)$", "$\\kappa$", "$\\omega(u \\mid P_n)$", "$\\Delta(P_n, u)$",
        "$u^\\top\\theta(P_n)$", "95% oracle interval", "Gaussian draw $Z$",
    } <= marked
    assert {
        "$\\hat N$", "$m$", "$\\hat\\lambda_{\\min}$", "Threshold of (14)",
        "Released value $T$", "95% private interval",
    } <= plain


def test_epsilon_changes_threshold():
    at = start(noise_seed=1)
    before = metric(at, "Threshold of (14)")
    at.number_input(key="epsilon").set_value(2.0).run()
    assert_clean(at)
    assert metric(at, "Threshold of (14)") != before


def test_private_settings_do_not_refit(monkeypatch):
    calls = []
    real = core.pipeline.prepare

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(core.pipeline, "prepare", counting)
    st.cache_resource.clear()
    at = start(noise_seed=1)
    assert calls, "the first runs fit"
    calls.clear()
    at.number_input(key="epsilon").set_value(6.0).run()
    at.number_input(key="split_a").set_value(2.0).run()
    at.selectbox(key="coordinate").set_value("x3").run()
    at.slider(key="level").set_value(0.9).run()
    at.number_input(key="noise_seed").set_value(2).run()
    assert_clean(at)
    assert not calls
    at.number_input(key="lam_reg").set_value(0.01).run()
    assert len(calls) == 1


@pytest.mark.parametrize(
    "widgets",
    [
        dict(epsilon=0.01, delta=0.9, split_a=100.0, split_b=1.0, split_c=1.0),  # stage-1 delta above 1/2
        dict(epsilon=0.0),
        dict(delta=0.0),
        dict(split_b=0.0),
        dict(d=40, n=30),  # n <= d
    ],
)
def test_bad_input_shows_error(widgets):
    at = start(**widgets)
    assert_clean(at)
    assert len(at.error) == 1
    assert at.error[0].value


def test_small_sample_is_bottom_without_stage_2():
    at = start(n=2_000)
    assert_clean(at)
    assert metric(at, "Status") == "⊥"
    assert any("Not reached" in i.value for i in at.info)


@pytest.mark.parametrize("widgets", [dict(loss="logistic", lam_reg=0.001), dict(domain="ball", calibration="analytic")])
def test_other_settings_render(widgets):
    at = start(**widgets)
    assert_clean(at)
    assert not at.error
