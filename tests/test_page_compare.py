"""The Compare page, driven through Streamlit's AppTest from the app's entry point."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.methods.compare import METHODS
from ui import params
from ui.theme import METHOD_LABELS

APP = Path(__file__).absolute().parents[1] / "app.py"


def open_compare(**settings: object) -> AppTest:
    """The Compare page on a small synthetic sample, with the given settings in the session."""
    at = new_app(120)
    at.session_state["n"] = 20_000
    for key, value in settings.items():
        at.session_state[key] = value
    at.switch_page("pages/compare.py")
    return at.run()


def open_link(methods: str) -> AppTest:
    """/compare?methods=..., as a fresh session's first request."""
    at = new_app(120)
    at.query_params["methods"] = methods
    at.query_params["n"] = "20000"
    at.switch_page("pages/compare.py")
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_teaching_mode_renders_and_waits_for_the_button():
    at = open_compare()
    assert_clean(at)
    assert at.button(key="run_comparison").label == "Run comparison"
    assert not at.dataframe


def test_run_gives_one_row_per_method_and_flags_the_oracle():
    at = open_compare(trials=3, noise_seed=5)
    at.button(key="run_comparison").click().run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert list(table["method"]) == [METHOD_LABELS[m] for m in METHODS]
    private = dict(zip(table["method"], table["private"], strict=True))
    assert private.pop(METHOD_LABELS["oracle"]) is False
    assert all(private.values())
    assert set(table["released"].str.split().str[-1]) == {"3"}
    assert "RMSE vs uᵀθ*" in table.columns  # synthetic data know θ*


def test_result_is_kept_until_a_setting_changes():
    at = open_compare(trials=2)
    at.button(key="run_comparison").click().run()
    at.run()
    assert len(at.dataframe) == 1
    at.session_state["epsilon"] = 2.0
    at.run()
    assert_clean(at)
    assert not at.dataframe


def test_custom_direction_is_the_target():
    at = open_compare(trials=2, direction="1, 1, 0, 0, 0", methods=["oracle"])
    at.button(key="run_comparison").click().run()
    assert_clean(at)
    comparison = at.session_state["comparison"].result
    assert comparison.u == pytest.approx(np.array([1, 1, 0, 0, 0]) / np.sqrt(2))


def test_full_vector_methods_get_their_own_table():
    at = open_compare(trials=2, methods=["local", "algorithm3", "algorithm7"])
    at.button(key="run_comparison").click().run()
    assert_clean(at)
    singles, vectors = (d.value for d in at.dataframe)
    assert list(singles["method"]) == [METHOD_LABELS["local"]]
    assert list(vectors["method"]) == [METHOD_LABELS["algorithm3"], METHOD_LABELS["algorithm7"]]
    for table in at.dataframe:  # the method stays in view while a wide table scrolls sideways
        assert json.loads(table.proto.columns)["method"]["pinned"] is True


def test_publish_mode_shows_only_an_explanation():
    at = open_compare(mode="publish")
    assert not at.exception
    assert any("teaching mode only" in i.value for i in at.info)
    assert not at.dataframe
    assert not [b for b in at.button if b.key == "run_comparison"]


def test_bad_budget_is_an_error_message():
    at = open_compare(epsilon=-1.0)
    assert not at.exception
    assert at.error
    assert not [b for b in at.button if b.key == "run_comparison"]


COVERAGE_FIT, COVERAGE_STAR = "coverage of uᵀθ(Pₙ) · not private", "coverage of uᵀθ* · not private"


def test_release_coverage_and_width_columns_say_what_they_are():
    at = open_compare(trials=4, noise_seed=2, methods=["local", "local_fallback", "oracle", "output_perturbation"])
    at.button(key="run_comparison").click().run()
    assert_clean(at)
    table = at.dataframe[0].value.set_index("method")
    for column in ("release rate", "by fallback", COVERAGE_FIT, COVERAGE_STAR, "median half-width", "RMSE vs uᵀθ(Pₙ)"):
        assert column in table.columns, column
    oracle, output = table.loc[METHOD_LABELS["oracle"]], table.loc[METHOD_LABELS["output_perturbation"]]
    assert oracle["release rate"].startswith("4/4 = 100.0 % [")
    assert oracle[COVERAGE_FIT].startswith("4/4 ") or oracle[COVERAGE_FIT].startswith("3/4 ")
    assert oracle["median half-width"] > 0
    # no interval is stated: said so, never 0 %
    assert output[COVERAGE_FIT] == output[COVERAGE_STAR] == "no interval"
    assert np.isnan(output["median half-width"])
    assert output["by fallback"] == "no fallback"
    assert table.loc[METHOD_LABELS["local_fallback"], "by fallback"].endswith("]")
    captions = " ".join(c.value for c in at.caption)
    assert "Clopper–Pearson" in captions and "Release rate" in captions and "not private" in captions
    assert any("not private" in m.value and "coverage" in m.value.lower() for m in at.markdown)


def test_a_method_that_released_nothing_says_so():
    at = open_compare(trials=2, n=2000, epsilon=1.0, methods=["local"])
    at.button(key="run_comparison").click().run()
    assert_clean(at)
    row = at.dataframe[0].value.iloc[0]
    assert row["release rate"].startswith("0/2 = 0.0 %")
    assert row[COVERAGE_FIT] == "nothing released"


def test_a_link_opens_with_its_methods():
    at = open_link("local,oracle")
    assert_clean(at)
    assert at.multiselect(key="methods").value == ["local", "oracle"]
    assert not at.sidebar.warning
    at.button(key="run_comparison").click().run()
    assert list(at.dataframe[0].value["method"]) == [METHOD_LABELS["local"], METHOD_LABELS["oracle"]]


@pytest.mark.parametrize("raw", ["", "foo", "local,local", "local,foo", ",", "local," * 5000, "x" * 100_000])
def test_an_unusable_methods_link_gives_the_default_and_a_notice(raw):
    at = open_link(raw)
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="methods").value == list(METHODS) == params.PARAMS["methods"].default
    notice = " ".join(w.value for w in at.sidebar.warning)
    shown = raw if len(raw) <= 20 else raw[:20] + "…"
    assert f"methods={shown} (" in notice and "could not be used" in notice, notice
    assert len(notice) < 300  # a long value is cut short
