"""The one way the tests open the app in Streamlit's AppTest (the `app` fixture of conftest.py hands it out too)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from streamlit.components.v2.component_manager import BidiComponentManager
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app.py"


@cache
def components() -> BidiComponentManager:
    """The installed Streamlit components, found once: an AppTest of its own scans every installed distribution's
    metadata on its first run (half a second here, most of a short page test), and they do not change in a session."""
    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def new_app(timeout: float = 90, query: dict[str, str] | None = None, **settings: object) -> AppTest:
    """The app, not yet run, with the link's query parameters and these session values (a page's first run then
    goes through app.py's navigation, as a browser's does). timeout bounds each run in seconds."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    assert at._bidi_component_manager is None  # AppTest's own scan, which components() makes once for all
    at._bidi_component_manager = components()
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in settings.items():
        at.session_state[key] = value
    return at


def on_page(page: str, timeout: float = 300, **settings: object) -> AppTest:
    """new_app with these session values, run once (the first run registers st.navigation's pages), then switched
    to pages/<page>.py and run."""
    at = new_app(timeout, **settings)
    at.run()
    return at.switch_page(f"pages/{page}.py").run()
