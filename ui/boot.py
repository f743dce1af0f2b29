"""Every page runs through app.py's navigation, even the first run of a fresh server opened on a deep link.

Streamlit takes an app whose entry point has a folder named pages/ beside it for a legacy multipage app
until some run has called st.navigation: on a fresh server a link such as /pipeline?epsilon=2 would run
pages/pipeline.py alone (no settings from the link, no sidebar, Streamlit's own listing of the folder).
A page calls `through_navigation()` first; on such a run it ends the legacy mode, as st.navigation
itself does, and starts the run again, which then goes through app.py to the same page. Only a session's
first run (an empty session) is restarted: a later run may carry a button's click, which a restart would drop.
"""

import importlib
import logging
import pkgutil
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from urllib.parse import unquote, urlparse

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from core.data.spec import SyntheticSpec
from core.estimator.compiled import build_in_background, cache_is_warm, kernels
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import make_rng, prepare_spec, run_private
from core.privacy.accounting import make_budget
from core.privacy.gaussian import DEFAULT_CALIBRATION
from ui import params


@asynccontextmanager
async def lifespan(app: object) -> AsyncIterator[None]:
    """A server's start (serve.py): the kernels' build begun and every module of the app imported before it accepts
    a request (about 1.5 s on a fresh process), so that a class's first link is drawn about as fast as a later one.
    Kernels a child has built before are loaded here, after the imports (half a second): a first request then never
    runs on the pure-Python loops, and no child is started."""
    warm = cache_is_warm()
    if not warm:
        build_in_background()  # compiled by a child on another core while the imports run
    import dp_accounting  # noqa: F401  the analytic calibration's solver, imported by the first release

    import ui

    for module in pkgutil.iter_modules(ui.__path__):
        importlib.import_module(f"ui.{module.name}")
    if warm:
        kernels()
    yield


def build_kernels() -> None:
    """The compiled kernels built in a child process (core.estimator.compiled: numba compiles them on a fresh
    install, about 4 s, then loads them from its cache); the pure-Python loops, the same bits, serve meanwhile."""
    build_in_background()


@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    """Once per server, in the background after its first run: the pipeline on a tiny synthetic problem, so that
    the analytic calibration's dp_accounting (a second or two to import) is ready before a class's release; no
    page waits for it. Its numbers are thrown away."""

    def run() -> None:
        try:
            spec = SyntheticSpec("robust", 400, 3, 1.0, 1.0, 0)
            problem = prepare_spec(spec.load(), ModelSpec("robust").resolve(3), spec)
            run_private(problem, 0, make_budget(8.0, 1e-6), make_rng(0), DEFAULT_CALIBRATION)
        except Exception:  # a warm-up that fails costs only the time it saves
            logging.getLogger(__name__).exception("the background warm-up failed")

    thread = threading.Thread(target=run, name="psp-warm-up", daemon=True)
    thread.start()
    return thread


UNEXPECTED = ("Something unexpected went wrong on this page; your settings are kept, so reload the page or undo the "
              "last change.")


@contextmanager
def unexpected_errors() -> Iterator[None]:
    """A page's last line: an error no page handled is logged on the server and shown as one sentence, never a
    traceback, unless the server is configured to show details (client.showErrorDetails "full" or "stacktrace",
    as a developer's or the tests' is). Streamlit's own rerun and stop signals are not Exceptions and pass."""
    try:
        yield
    except Exception:
        if st.get_option("client.showErrorDetails") in ("full", "stacktrace", True):
            raise
        logging.getLogger(__name__).exception("unexpected error on a page")
        st.error(UNEXPECTED, icon=":material/error:")


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
    if name is not None:  # quoted short, and never when it looks like an access key (ui.params)
        shown = "at this address" if params.looks_like_key(name) else f"“{params.shown(name)}”"
        st.warning(f"There is no page {shown}; this is the Start page. The pages are listed in the sidebar.",
                   icon=":material/link_off:")
