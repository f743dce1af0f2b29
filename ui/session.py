"""A session's start: its settings filled from the link once, kept across pages, and the domain following the data.

`init()` runs first on every rerun (app.py); a page run without app.py (a deep link's first run) calls `ensure()`.
"""

from __future__ import annotations

import streamlit as st

from ui import loaded, params


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
    if "domain" not in st.query_params:
        loaded.follow_the_data()
