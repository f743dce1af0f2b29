"""Hand-edited links: a value outside its control's range is replaced by the default, with a notice."""

from __future__ import annotations

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest


def open_link(**query: str) -> AppTest:
    at = new_app(90)
    at.session_state["n"] = 20_000
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("key,value,default", [("epsilon", "1000", 4.0), ("delta", "1e-300", 1e-6),
                                               ("delta", "0.9", 1e-6), ("level", "2", 0.95),
                                               ("level", "0.2", 0.95), ("epsilon", "-1", 4.0)])
def test_out_of_range_values_fall_back_with_a_notice(key, value, default):
    at = open_link(**{key: value})
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == default
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert f"{key}={value}" in notice and "default" in notice


@pytest.mark.parametrize("key,value", [("epsilon", "100"), ("delta", "1e-15"), ("level", "0.99")])
def test_values_at_the_edges_of_the_range_are_kept(key, value):
    at = open_link(**{key: value})
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == float(value)
    assert not [w for w in at.sidebar.warning if "could not be used" in w.value]


def test_a_large_epsilon_is_explained_and_a_delta_above_one_over_n_is_flagged():
    """ε = 8: an attacker starting at 50 % may end e^8 / (1 + e^8) = 99.97 % sure; δ = 0.01 >= 1/n at n = 20,000."""
    warnings = " ".join(w.value for w in open_link(epsilon="8", delta="0.01").sidebar.warning)
    assert "99.97 %" in warnings and "2,980" in warnings
    assert "1/n = 5e-05" in warnings
    assert not open_link(epsilon="4").sidebar.warning  # the default budget: nothing to flag


def test_an_unknown_census_encoding_falls_back_naming_its_control():
    at = open_link(source="acs", census_sample="2000", encoding="bogus")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["encoding"] == "centred"
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert "encoding=bogus (not one of centred, paper; set it with “Census encoding” on the Data page)" in notice


def test_a_parameter_that_is_no_setting_gets_a_notice_naming_the_closest():
    at = new_app(90)
    at.query_params["seed"] = "3"
    at.run()
    assert not at.exception
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert "seed=3 (not a setting of this app; did you mean noise_seed?)" in notice


def test_a_coordinate_that_is_no_feature_gets_a_notice():
    at = open_link(coordinate="no_such_feature")
    at.switch_page("pages/pipeline.py").run()
    assert not at.exception
    assert any("“no_such_feature” is not a feature of these data" in w.value for w in at.main.warning)
    assert at.session_state["coordinate"] == ""


def test_a_link_to_no_page_is_named():
    from ui.boot import unknown_page

    pages = {"", "data", "pipeline"}
    assert unknown_page("http://h:8501/nonexistent-page?epsilon=2", pages) == "nonexistent-page"
    assert unknown_page("http://h:8501/a/b", pages) == "a/b"
    for fine in ("http://h:8501/", "http://h:8501/pipeline?x=1", "http://h:8501/data/", None):
        assert unknown_page(fine, pages) is None
    assert unknown_page("http://h/base/", pages, "base") is None
    assert unknown_page("http://h/base/data", pages, "/base/") is None
    assert unknown_page("http://h/base/nope", pages, "base") == "nope"


@pytest.mark.parametrize("query,key", [({"n": "5"}, "n"), ({"n": "6", "d": "7"}, "n"),
                                       ({"d": "200", "n": "2000000"}, "n")])
def test_n_and_d_that_no_synthetic_data_take_together_fall_back_with_a_notice(query, key):
    """Each in its range, not together (n must exceed d, n·d at most 2·10⁸): the link's n goes back to its default
    with the same sidebar notice as any other unusable value, never a red error on the page."""
    at = new_app(90, query=query)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.exception]
    assert at.session_state[key] == 100_000
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert f"{key}={query[key]}" in notice and "synthetic data need d < n" in notice
