"""Links in a real browser: the Start page at the root, and a deep link to every page on a freshly started server.

Each test gets a server of its own (test_browser's fresh_server), so no earlier page or tab has run on it:
that first run is where a link can go wrong. The Start page's test starts its server as a user does, in an
interpreter of its own (the others fork theirs, tests/server_fork.py). Screenshots go to test-artifacts/ as in
test_browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from test_browser import (  # noqa: F401
    check_clean,
    executable,
    fresh_server,
    link_drops,
    new_tab,
    serve,
    settle,
    text,
)

pytestmark = pytest.mark.browser  # a real browser: the full lane only

TITLES = ("Start", "Data", "Pipeline", "Compare", "Attacker's view", "Planner", "Report", "Experiments")
PUBLISH_ONLY_TITLES = tuple(t for t in TITLES if t not in ("Compare", "Attacker's view"))  # closed in publish mode


def assert_own_navigation(tab, titles: tuple[str, ...] = TITLES) -> None:
    """The sidebar lists the app's pages by their titles, never the file names of the pages/ folder."""
    links = tab.locator('[data-testid="stSidebarNav"] a')
    links.first.wait_for()
    shown = links.all_inner_texts()
    assert len(shown) == len(titles), shown
    for title, link in zip(titles, shown, strict=True):
        assert re.search(rf"{title}\s*$", link), shown


def opened(tab, url: str, heading: str, name: str, titles: tuple[str, ...] = TITLES) -> None:
    tab.goto(url)
    settle(tab)
    tab.get_by_role("heading", name=heading, level=1).wait_for()
    assert not tab.get_by_text("Page not found").count()
    assert_own_navigation(tab, titles)
    check_clean(tab, name)


@pytest.mark.parametrize("path,heading", [
    ("data", "Data"),
    ("compare", "Compare methods"),
    ("planner", "Planner"),
    ("report", "Report"),
    ("experiments", "Experiments"),
])
def test_a_deep_link_opens_its_page_on_a_fresh_server(browser, fresh_server: str, path: str, heading: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        opened(tab, f"{fresh_server}/{path}?n=20000", heading, f"11-link-{path}")
        text(tab, "n = 20,000").wait_for()  # the link's setting, in the sidebar app.py draws
    finally:
        tab.close()


def test_a_pipeline_link_applies_its_settings_on_a_fresh_server(browser, fresh_server: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        opened(tab, f"{fresh_server}/pipeline?epsilon=2&n=20000", "Privately releasing one coefficient",
               "12-link-pipeline")
        sidebar = tab.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text(re.compile(r"Budget · ε = 2, δ = 1e-06")).wait_for()
        sidebar.get_by_text("n = 20,000").first.wait_for()
        assert re.search(r"[?&]epsilon=2(&|$)", tab.url), tab.url  # sync_url keeps the link's settings
    finally:
        tab.close()


@pytest.fixture
def started_server(executable: str) -> Iterator[str]:  # noqa: F811
    """A fresh server started as the README starts it: `streamlit run serve.py` in a new interpreter."""
    with serve("streamlit-started.log", forked=False) as url:
        yield url


def test_every_deep_link_works_once_the_root_has_run(browser, started_server: str):  # noqa: F811
    """The Start page drawn at the root as a fresh server's first request; after it, every page answers at its own
    URL path with the link's settings."""
    tab = new_tab(browser)
    try:
        opened(tab, f"{started_server}/", "Start", "13-root-first")
        for label in ("Teaching demo on synthetic data", "What if n or ε were larger?", "Publish on your data"):
            tab.get_by_role("button", name=label).wait_for()
        tab.locator('[data-testid="stGraphVizChart"]').wait_for()
        for path, heading in (("data", "Data"), ("compare", "Compare methods"), ("attacker", "The attacker's view"),
                              ("planner", "Planner"),
                              ("report", "Report"), ("experiments", "Experiments"),
                              ("pipeline", "Privately releasing one coefficient")):
            opened(tab, f"{started_server}/{path}?epsilon=2&n=20000", heading, f"14-after-root-{path}")
            tab.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"Budget · ε = 2, ")).wait_for()
        # A path that names no page shows Start, and says so.
        tab.goto(f"{started_server}/nonexistent-page")
        settle(tab)
        tab.get_by_role("heading", name="Start", level=1).wait_for()
        text(tab, "There is no page “nonexistent-page”; this is the Start page").wait_for()  # beside Streamlit's dialog
    finally:
        tab.close()


@pytest.fixture
def locked_fresh_server(executable: str, tmp_path) -> Iterator[str]:  # noqa: F811
    """A fresh server of a publish-only deployment (serve() passes its environment on to the server)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PSP_PUBLISH_ONLY", "1")
        with serve("streamlit-locked-fresh.log", ledger=tmp_path / "ledger.sqlite3") as url:
            mp.delenv("PSP_PUBLISH_ONLY")
            yield url


def test_a_deep_link_cannot_reach_teaching_on_a_fresh_publish_only_server(browser, locked_fresh_server: str):  # noqa: F811
    """The first request of a fresh publish-only server, a link asking for teaching mode and a seed: the page still
    runs through app.py, so it is locked to publish mode and shows nothing non-private."""
    tab = new_tab(browser)
    try:
        opened(tab, f"{locked_fresh_server}/pipeline?mode=teaching&noise_seed=3&n=20000",
               "Privately releasing one coefficient", "15-link-locked-pipeline", PUBLISH_ONLY_TITLES)
        tab.locator('[data-testid="stSidebar"]').get_by_text(re.compile("locked by this deployment")).wait_for()
        text(tab, "Nothing released yet").wait_for()
        assert not tab.get_by_text(re.compile("not private", re.I)).count()
        link_drops(tab, "mode=teaching", "noise_seed")
    finally:
        tab.close()
