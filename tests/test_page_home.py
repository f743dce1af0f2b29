"""The Start page, driven through Streamlit's AppTest: the default page, its three starting points, and what a
publish-only deployment offers."""

from __future__ import annotations

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

N = 20_000
STARTS = ("start_demo", "start_what_if", "start_publish")


def start_page(**settings: object) -> AppTest:
    at = new_app(90)
    at.session_state["n"] = N
    for key, value in settings.items():
        at.session_state[key] = value
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def keys(at: AppTest) -> set[str]:
    return {b.key for b in at.main.button}


def test_the_start_page_is_the_default_and_explains_the_app():
    at = start_page()
    assert_clean(at)
    assert at.title[0].value == "Start"
    text = " ".join(m.value for m in at.main.markdown)
    assert "one coefficient" in text and "differential privacy" in text
    assert "Teaching" in text and "Publish" in text
    assert "stability test" in " ".join(c.value for c in at.main.caption)  # the diagram in words
    assert keys(at) == set(STARTS)


@pytest.mark.parametrize("key,title,settings", [
    ("start_demo", "Privately releasing one coefficient", {"source": "synthetic_robust", "mode": "teaching"}),
    ("start_what_if", "Privately releasing one coefficient",
     {"source": "synthetic_robust", "mode": "teaching", "n": N, "epsilon": 1.0}),
    ("start_publish", "Data", {"source": "upload", "mode": "publish"}),
])
def test_each_starting_point_opens_its_page_with_its_settings(key, title, settings):
    at = start_page(source="synthetic_logistic", epsilon=8.0)  # settings the starting point must replace
    at.button(key=key).click().run()
    assert_clean(at)
    assert at.title[0].value == title
    for name, value in settings.items():
        assert at.session_state[name] == value, name


def test_the_what_if_starting_point_lands_where_the_test_fails():
    at = start_page()
    at.button(key="start_what_if").click().run()
    assert_clean(at)
    shown = " ".join(m.value for m in at.main.markdown)
    assert "nothing released" in shown and "What-if" in shown


def test_a_publish_only_deployment_offers_no_teaching_start(monkeypatch):
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    at = start_page()
    assert_clean(at)
    assert keys(at) == {"start_publish"}
    assert "not available" in at.main.info[0].value
    at.button(key="start_publish").click().run()
    assert at.title[0].value == "Data" and at.session_state["mode"] == "publish"
