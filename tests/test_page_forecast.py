"""A warning before the money is spent: the Pipeline's publish mode says when a release may give an interval too wide
to inform anyone, before anything is charged and again, with the forecast, after "Certify first"; the Planner shows
the same forecast from its assumptions."""

from __future__ import annotations

import re

from apptest import new_app, on_page
from streamlit.testing.v1 import AppTest

LOGISTIC = dict(source="synthetic_logistic", n=20_000, d=3)


def pipeline(monkeypatch, **settings: object) -> AppTest:
    monkeypatch.setenv("PSP_CAP_EPSILON", "10")
    monkeypatch.setenv("PSP_CAP_DELTA", "1e-5")
    at = new_app(120, **LOGISTIC, mode="publish", **settings)
    at.run()
    at.switch_page("pages/pipeline.py")
    at.session_state["mode"] = "publish"  # AppTest runs the page alone after its first run (see test_page_report)
    return at.run()


def warnings(at: AppTest) -> list[str]:
    return [w.value for w in at.warning]


def notes(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if "Before paying" in c.value]


def test_a_release_that_may_be_too_wide_is_warned_before_anything_is_charged(monkeypatch):
    at = pipeline(monkeypatch, epsilon=0.05)
    assert not at.exception
    (notice,) = notes(at)
    assert "wider than the coefficient's plausible range (±4.61)" in notice and "Certify first" in notice
    at.button(key="certify").click()
    at.session_state["mode"] = "publish"
    at.run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("Forecast: the 95% interval's half-width will likely be") for c in at.caption)
    # at ε = 0.05 the probe's ceiling almost never lets the interval for the fitted coefficient be given, so the ridge
    # coefficient's exact width is the forecast, and the warning is a certainty or near one (about 1 draw in 16 of
    # the certificates leaves a chance of 1 %, and the warning states it)
    (warned,) = [w for w in warnings(at) if w.startswith("This release") and "too wide to inform anyone" in w]
    certain = warned.startswith("This release will almost surely give")
    stated = re.search(r"with probability about (\d+)%", warned)
    assert certain or int(stated.group(1)) >= 95, warned
    assert "More ε, more rows" in warned


def test_no_warning_where_the_certificates_say_the_interval_will_inform(monkeypatch):
    at = pipeline(monkeypatch, epsilon=8.0)
    at.button(key="certify").click()
    at.session_state["mode"] = "publish"
    at.run()
    assert any(c.value.startswith("Forecast: the 95% interval's half-width will likely be") for c in at.caption)
    assert not any("too wide to inform" in w for w in warnings(at))
    assert not notes(at)  # the forecast replaces the note once certificates wait


def test_the_planner_forecasts_by_the_same_rule():
    at = on_page("planner", planner_loss="logistic", planner_n=20_000, planner_d=17, planner_lambda_min=0.02,
                 planner_lambda_max=0.2, epsilon=4.0, domain="ball", radius=3.0)
    assert not at.exception
    assert any(c.value.startswith("Forecast: the 95% interval's half-width will likely be") for c in at.caption)
    assert any(w.startswith("This release may give an interval too wide") for w in warnings(at))
