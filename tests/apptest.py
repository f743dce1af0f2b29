"""The one way the tests open the app in Streamlit's AppTest (the `app` fixture of conftest.py hands it out too)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app.py"


def new_app(timeout: float = 90, query: dict[str, str] | None = None, **settings: object) -> AppTest:
    """The app, not yet run, with the link's query parameters and these session values (a page's first run then
    goes through app.py's navigation, as a browser's does). timeout bounds each run in seconds."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
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
