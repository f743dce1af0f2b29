"""Every page runs through app.py's navigation, even the first run of a fresh server opened on a deep link.

Streamlit takes an app whose entry point has a folder named pages/ beside it for a legacy multipage app
until some run has called st.navigation: on a fresh server a link such as /pipeline?epsilon=2 would run
pages/pipeline.py alone (no settings from the link, no sidebar, Streamlit's own listing of the folder).
A page calls `through_navigation()` first; on such a run it ends the legacy mode, as st.navigation
itself does, and starts the run again, which then goes through app.py to the same page. Only a session's
first run (an empty session) is restarted: a later run may carry a button's click, which a restart would drop.
"""

from urllib.parse import unquote, urlparse

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def through_navigation() -> None:
    """Restart a run that reached a page without app.py's navigation; otherwise do nothing."""
    if PagesManager.uses_pages_directory and not st.session_state:
        PagesManager.uses_pages_directory = False  # what st.navigation sets on its first call
        st.rerun()


def unknown_page(url: str | None, paths: set[str], base: str = "") -> str | None:
    """The link's page name when it names no page (Streamlit then shows the default one), else None; base is the
    server's URL prefix (server.baseUrlPath)."""
    if not url:
        return None
    path = unquote(urlparse(url).path).strip("/")
    prefix = base.strip("/")
    if prefix and (path == prefix or path.startswith(prefix + "/")):
        path = path[len(prefix):].strip("/")
    return path if path and path not in paths else None


def unknown_page_notice(paths: set[str]) -> None:
    """Say so when the link named a page that does not exist, instead of silently showing Start."""
    name = unknown_page(st.context.url, paths, st.get_option("server.baseUrlPath") or "")
    if name is not None:
        shown = name if len(name) <= 40 else name[:40] + "…"
        st.warning(f"There is no page “{shown}”; this is the Start page. The pages are listed in the sidebar.",
                   icon=":material/link_off:")
