"""The app's fragments (ui.session.fragment): their reruns keep every setting alive without ever assigning a setting
whose widget the same run has drawn."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]

# Two fragments in one run, as when Streamlit reruns two queued fragments together: the first draws ε's control, the
# second, rerun in the same run, keeps the settings alive and must skip ε.
TWO_FRAGMENTS = """
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from ui import params, session

params.fill()

@session.fragment
def first():
    st.number_input("ε", key="epsilon")

@session.fragment
def second():
    st.markdown(f"second ran at n = {st.session_state['n']}")

first()
get_script_run_ctx().fragment_ids_this_run = ["first", "second"]
second()
"""


def test_a_later_fragment_of_the_same_run_skips_a_drawn_setting():
    at = AppTest.from_string(TWO_FRAGMENTS)
    at.session_state["n"] = 20_000
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "second ran at n = 20000" in [m.value for m in at.markdown]
    assert at.session_state["epsilon"] == 4.0


def test_every_fragment_of_the_app_is_the_sessions():
    """A bare st.fragment would drop the other pages' settings at the end of its rerun."""
    bare = [str(p.relative_to(ROOT)) for folder in ("pages", "ui") for p in (ROOT / folder).glob("*.py")
            if p.name != "session.py" and re.search(r"\bst\.fragment\b", p.read_text())]
    assert bare == []
