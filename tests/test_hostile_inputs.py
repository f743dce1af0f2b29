"""Hostile links: a value the core cannot use falls back to the default with a notice naming it; a value at the edge
of its range is kept, by the Data page's widgets too. (Bad input to the command line and the library, each ending in
one clear sentence: tests/test_bad_input.py.)
"""

from __future__ import annotations

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from ui import params


def open_link(page: str | None = None, **query: str) -> AppTest:
    at = new_app(120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


CHEAP = {"source": "upload"}  # nothing is loaded or fitted: the link's values are all that is checked
# key: (a value outside the range the core supports, a value at the edge of it, kept)
EDGES = {
    "n": ("10000001", "10000000"), "d": ("201", "200"), "theta_norm": ("1001", "1000"),
    "noise_scale": ("-1", "0"), "sample_seed": ("-1", str(2**53 - 1)), "year": ("2013", "2100"),
    "acs_n": ("0", "10000000"), "lam_reg": ("1e300", "100"), "radius": ("1e300", "0.01"),
    "epsilon": ("1e-320", "0.001"), "delta": ("0.9999", "0.1"), "split_a": ("0", "1000"),
    "split_b": ("1e-4", "0.001"), "split_c": ("inf", "1000"), "level": ("1", "0.5"),
    "noise_seed": ("-1", str(2**53 - 1)), "trials": ("501", "1"),
}


def test_every_numeric_setting_has_a_range():
    numeric = {k for k, p in params.PARAMS.items() if p.choices is None and isinstance(p.default, (int, float))}
    numeric |= {"acs_n", "radius", "noise_seed"}  # optional numbers (default None)
    assert numeric - {"download", "with_replacement", "present"} == set(EDGES)  # booleans
    assert all(params.PARAMS[k].bounds is not None for k in EDGES)


def assert_fallback(at: AppTest, key: str, raw: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == params.PARAMS[key].default
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert f"{key}={raw}" in notice and "default" in notice, notice


@pytest.mark.parametrize("key", sorted(EDGES))
def test_out_of_range_and_nan_fall_back_with_a_notice(key):
    out = EDGES[key][0]
    assert_fallback(open_link(**CHEAP, **{key: out}), key, out)
    assert_fallback(open_link(**CHEAP, **{key: "nan"}), key, "nan")


@pytest.mark.parametrize("key", sorted(EDGES))
def test_values_at_the_edge_are_kept(key):
    edge = EDGES[key][1]
    at = open_link(**CHEAP, **{key: edge})
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == params.PARAMS[key].parse(edge) != params.PARAMS[key].default
    assert not at.sidebar.warning


@pytest.mark.parametrize("key,raw", [("domain", "sphere"), ("download", "maybe"), ("mode", "admin"),
                                     ("n", "1e6"), ("d", "five"), ("calibration", ""),
                                     ("coverage", "both")])
def test_unusable_choices_and_text_fall_back_with_a_notice(key, raw):
    assert_fallback(open_link(**CHEAP, **{key: raw}), key, raw)


@pytest.mark.parametrize("raw", ["", "foo", "local,local", "local,,oracle", ",", "oracle;local", "<b>local</b>"])
def test_unusable_method_lists_fall_back_with_a_notice(raw):
    assert_fallback(open_link(**CHEAP, methods=raw), "methods", raw)


def test_a_very_long_method_list_falls_back_and_is_cut_short_in_the_notice():
    raw = "local," * 20_000
    at = open_link(**CHEAP, methods=raw)
    assert_fallback(at, "methods", raw[:20] + "…")
    assert len(" ".join(w.value for w in at.sidebar.warning)) < 300


def test_a_method_list_is_kept():
    at = open_link(**CHEAP, methods="oracle, algorithm7")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["methods"] == ["oracle", "algorithm7"]
    assert not at.sidebar.warning


@pytest.mark.parametrize("query", [dict(n="2000000"), dict(n="20000", d="50")])
def test_the_data_page_keeps_a_valid_linked_size(query):
    at = open_link("pages/data.py", **query)
    assert not at.exception, [e.value for e in at.exception]
    for key, value in query.items():
        assert at.session_state[key] == int(value)
        assert at.number_input(key=key).value == int(value)
    assert not at.sidebar.warning
