"""The Planner page, driven through Streamlit's AppTest from the app's entry point."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from apptest import new_app, on_page
from streamlit.testing.v1 import AppTest

from core.teaching.planner import Assumptions, plan, smallest_epsilon, smallest_n, sweep_n
from ui.format import num
from ui.planner_figures import half_width_figure

APP = Path(__file__).absolute().parents[1] / "app.py"
# The page's own defaults, with the registry's default budget (epsilon 4, delta 1e-6) and model (cube, no ridge).
DEFAULT = Assumptions(n=100_000, d=5, lambda_min=0.1, lambda_max=0.15, epsilon=4.0, delta=1e-6)
TARGET = 0.01


def open_planner(query: dict[str, str] | None = None, **settings: object) -> AppTest:
    """The Planner page with the given session settings (a small synthetic sample is the loaded data)."""
    at = new_app(120)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.session_state["n"] = 2_000  # the sidebar loads the data set; the planner never reads it
    at.session_state["planner_n"] = 100_000  # the assumed n (by default the app's n setting)
    for key, value in settings.items():
        at.session_state[key] = value
    at.switch_page("pages/planner.py")
    return at.run()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def expected(a: Assumptions) -> dict[str, str]:
    """The metrics the page should show for assumptions a, from core.teaching.planner directly."""
    p = plan(a)
    eps, n = smallest_epsilon(a, TARGET), smallest_n(a, TARGET)
    return {
        "Test (14), noise-free certificates": "passes" if p.passed else "fails (⊥)",
        "P(test passes)": f"{100 * p.pass_probability:.1f} %",
        f"Half-width at level {a.level:g}": num(p.half_width),
        "λ̂min (noise-free)": num(p.lambda_hat_min),
        "σ(ε_c, δ_c)": num(p.sigma),
        f"Smallest total ε at n = {a.n:,}": f"{eps:.4g}",
        f"Smallest n at ε = {a.epsilon:g}": f"{n:,}",
    }


@pytest.mark.parametrize("mode", ["teaching", "publish"])
def test_the_plan_is_shown_in_both_modes(mode):
    at = open_planner(mode=mode)
    assert_clean(at)
    shown = metrics(at)
    for label, value in expected(DEFAULT).items():
        assert shown[label] == value, label
    assert shown["Test (14), noise-free certificates"] == "passes"
    assert any("not a measurement" in c.value and "reads no data" in c.value for c in at.caption)
    assert at.get("plotly_chart")
    assert "published" not in at.session_state  # nothing was released, nothing charged


def test_a_locked_deployment_opens_the_planner(monkeypatch):
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    at = open_planner()
    assert_clean(at)
    assert metrics(at)["Half-width at level 0.95"] == num(plan(DEFAULT).half_width)


def test_kappa_and_lambda_max_give_the_same_plan():
    at = open_planner(planner_curvature="kappa", planner_kappa=1.5, planner_lambda_min=0.5)
    assert_clean(at)
    assert metrics(at)["Half-width at level 0.95"] == num(plan(DEFAULT).half_width)


def test_the_link_settings_are_used():
    """The shared budget and level from a link: epsilon 2 and level 0.9 change every number."""
    at = open_planner({"epsilon": "2", "level": "0.9"})
    assert_clean(at)
    a = Assumptions(n=100_000, d=5, lambda_min=0.1, lambda_max=0.15, epsilon=2.0, delta=1e-6, level=0.9)
    shown = metrics(at)
    for label, value in expected(a).items():
        assert shown[label] == value, label


def test_a_failing_plan_says_so():
    at = open_planner(planner_n=3_000)
    assert_clean(at)
    shown = metrics(at)
    assert shown["Test (14), noise-free certificates"] == "fails (⊥)"
    assert shown["Half-width at level 0.95"].startswith("—")


@pytest.mark.parametrize("settings,control", [
    (dict(planner_n=0), "Sample size n"), (dict(planner_d=0), "Dimension d"),
    (dict(planner_lambda_min=-0.1), "Assumed λmin"), (dict(planner_lambda_max=100.0), "Assumed λmax"),
    (dict(planner_curvature="kappa", planner_kappa=0.5), "Assumed κ"),
])
def test_bad_assumptions_are_one_error_naming_the_control(settings, control):
    at = open_planner(**settings)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and control in at.error[0].value
    assert not at.metric


def test_a_bad_target_still_shows_the_plan():
    at = open_planner(planner_target=0.0)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and "Target half-width" in at.error[0].value
    assert metrics(at)["Test (14), noise-free certificates"] == "passes"


@pytest.mark.parametrize("query", [
    {"epsilon": "100", "delta": "1e-15", "level": "0.99"},
    {"epsilon": "0.001", "delta": "0.1", "level": "0.5"},
    {"domain": "ball", "radius": "1000", "lam_reg": "100"},
    {"domain": "ball", "radius": "0.01"},
    {"accounting": "pld", "calibration": "analytic", "split_a": "1000", "split_b": "0.001"},
])
def test_links_at_the_edges_of_the_shared_settings(query):
    """Every shared setting at the edge of its link range gives a plan or one error naming a control."""
    at = open_planner(query)
    assert not at.exception, [e.value for e in at.exception]
    assert at.metric or len(at.error) == 1


def test_under_pld_accounting_the_epsilon_search_runs_on_request():
    at = open_planner({"accounting": "pld"})
    assert_clean(at)
    label = "Smallest total ε at n = 100,000"
    assert label not in metrics(at) and "Smallest n at ε = 4" in metrics(at)
    at.button(key="planner_search_pld").click().run()
    assert_clean(at)
    a = dataclasses.replace(DEFAULT, accounting="pld")
    assert metrics(at)[label] == f"{smallest_epsilon(a, TARGET):.4g}"
    at.run()  # kept while the assumptions and the target are unchanged
    assert label in metrics(at)
    at.session_state["planner_target"] = 0.02
    at.run()
    assert label not in metrics(at)


def test_the_figure_marks_failures_the_assumed_n_and_the_target():
    plans = sweep_n(DEFAULT, points=9)
    fig = half_width_figure(plans, plan(DEFAULT, probability=False), TARGET)
    names = [t.name for t in fig.data]
    assert names[0].startswith("planned half-width") and "assumed n" in names and names[-1].startswith("target")
    curve = fig.data[0]
    assert list(curve.x) == [p.assumptions.n for p in plans if p.passed]
    assert all(b < a for a, b in zip(curve.y, curve.y[1:], strict=False))  # the half-width falls with n
    failed = next(t for t in fig.data if t.name.startswith("test (14) fails"))
    assert max(failed.x) < min(curve.x)  # (14) fails below some n and passes above it
    assert list(fig.data[-1].y) == [TARGET, TARGET]


def test_the_assumed_n_and_d_start_from_the_apps_settings():
    """A first visit plans for the n and d the app is set to (public settings, as the sidebar shows them)."""
    at = new_app(120)
    at.query_params["n"] = "20000"
    at.query_params["d"] = "3"
    at.switch_page("pages/planner.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["planner_n"] == 20_000 and at.session_state["planner_d"] == 3


def test_the_planner_suggests_the_epsilon_that_makes_a_table_informative():
    at = on_page("planner", planner_loss="logistic", planner_n=132_527, planner_d=17, planner_lambda_min=0.02,
                 planner_lambda_max=0.2, epsilon=4.0, domain="ball", radius=2.35, planner_table=True)
    assert not at.exception
    (said,) = [c.value for c in at.caption if "coefficients (intervals together) is forecast informative" in c.value]
    assert said.startswith("A table of all 17 coefficients") and "n = 132,527" in said
    assert "At ε = 4 and n = 132,527, a table of all 17 coefficients is forecast informative." in [
        c.value for c in at.caption]


def test_the_planner_says_how_many_coefficients_a_table_may_hold():
    at = on_page("planner", planner_loss="logistic", planner_n=132_527, planner_d=17, planner_lambda_min=0.02,
                 planner_lambda_max=0.2, epsilon=3.15, delta=1e-6, domain="ball", radius=3.0, planner_table=True)
    assert not at.exception
    assert any(c.value.startswith("At ε = 3.15 and n = 132,527, a table of up to 8 of the 17 coefficients")
               for c in at.caption), [c.value for c in at.caption]


def test_without_a_plausible_range_the_planner_says_no_forecast_can_judge_a_table():
    """The robust loss without a response bound: no public plausible range, so neither "no table is informative"
    nor "no ε makes it" is claimed (both would be false where the plan's half-width is tiny)."""
    at = on_page("planner", planner_loss="robust", planner_n=100_000, planner_d=5, epsilon=4.0, planner_table=True)
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith("These assumptions give a coefficient no public plausible range") for c in captions)
    assert not any("forecast informative" in c or "No ε up to" in c for c in captions)
