"""A session's start: its settings filled from the link once, kept across pages, and the domain following the data.

`init()` runs first on every rerun (app.py); a page run without app.py (a deep link's first run) calls `ensure()`;
every fragment of the app is a `fragment`, whose own reruns keep the settings alive too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import loaded, params

P = ParamSpec("P")


def init() -> None:
    """Fill the session from the link once, and keep every setting alive across pages (app.py, first)."""
    params.keep_alive()
    ensure()


def ensure() -> None:
    """Fill only the missing settings: safe after widgets exist, for a page run without app.py. A new session's
    domain follows its data unless its link names one."""
    if not params.fill():
        return
    params.check_together()  # a new session's link: n and d each in range, but not together
    params.check_folder()
    if "domain" not in st.query_params:
        loaded.follow_the_data()


def fragment(func: Callable[P, None]) -> Callable[P, None]:
    """st.fragment whose own reruns keep every setting alive, as app.py's runs do: a fragment's rerun skips app.py, and
    at its end Streamlit would drop the settings of widgets on other pages, so the next page would start from the
    defaults. Only in a fragment's rerun: in a full run, app.py has kept them, and widgets drawn before the fragment
    may not be assigned."""

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        ctx = get_script_run_ctx()
        if ctx is not None and ctx.fragment_ids_this_run:
            params.keep_alive()
        func(*args, **kwargs)

    return st.fragment(run)
