"""Every page runs through app.py's navigation, even the first run of a fresh server opened on a deep link.

Streamlit takes an app whose entry point has a folder named pages/ beside it for a legacy multipage app
until some run has called st.navigation: on a fresh server a link such as /pipeline?epsilon=2 would run
pages/pipeline.py alone (no settings from the link, no sidebar, Streamlit's own listing of the folder).
A page calls `through_navigation()` first; on such a run it ends the legacy mode, as st.navigation
itself does, and starts the run again, which then goes through app.py to the same page. Only a session's
first run (an empty session) is restarted: a later run may carry a button's click, which a restart would drop.
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def through_navigation() -> None:
    """Restart a run that reached a page without app.py's navigation; otherwise do nothing."""
    if PagesManager.uses_pages_directory and not st.session_state:
        PagesManager.uses_pages_directory = False  # what st.navigation sets on its first call
        st.rerun()
