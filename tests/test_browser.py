"""The app in a real browser: a Streamlit server in a subprocess, driven by Playwright and Chromium.

Playwright's own browser downloads are not used: the system Chromium is launched through
executable_path. Without Chromium (or Playwright) the tests skip, except under CI=true, where that
is a broken environment and fails. Screenshots and the server's log go to test-artifacts/.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import server_fork

pytestmark = pytest.mark.browser  # a real browser: the full lane only

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright
except ImportError:  # the executable fixture skips, or fails under CI
    sync_playwright = None

ROOT = Path(__file__).absolute().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
N = 20_000
START_TIMEOUT = 60.0  # seconds for the server to answer its health check
RUN_TIMEOUT_MS = 120_000  # a script run; the first one loads the data and fits


def unavailable(reason: str) -> None:
    """Skip, or fail under CI, where a missing browser means a broken environment rather than a choice."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true requires the browser tests to run")
    pytest.skip(reason)


def chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if path is None:
        unavailable("no Chromium on this machine (apt-get install chromium); Playwright cannot download one here")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, exited: Callable[[], int | None], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if (code := exited()) is not None:
            pytest.fail(f"streamlit exited with code {code}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"streamlit did not serve {url} within {START_TIMEOUT:g} s:\n{log.read_text()}")


@contextmanager
def serve(log_name: str = "streamlit.log", ledger: Path | str | None = None,
          script: Path | None = None, forked: bool = True) -> Iterator[str]:
    """A Streamlit server of the app (or of another script), its log in test-artifacts/; yields its URL.

    Its privacy ledger is a file of its own (PSP_LEDGER), never the user's default one, or a postgresql:// URL. It is
    forked from a process that has imported the libraries already (tests/server_fork.py), or with forked=False
    started as a user starts it, `python -m streamlit run` in a new interpreter."""
    ARTIFACTS.mkdir(exist_ok=True)
    if ledger is None:
        ledger = Path(tempfile.mkdtemp(prefix="psp-ledger-")) / "ledger.sqlite3"
    env = {**os.environ, "PSP_LEDGER": str(ledger)}
    port = free_port()
    log = ARTIFACTS / log_name
    argv = ["run", str(script or "serve.py"), "--server.headless", "true", "--server.address", "127.0.0.1",
            "--server.port", str(port), "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    if forked:
        child = server_fork.start(argv, env, ROOT, log)
        exited, stop = (lambda: child.exitcode), child.join
    else:
        with log.open("w") as out:
            child = subprocess.Popen([sys.executable, "-m", "streamlit", *argv], cwd=ROOT, stdout=out,
                                     stderr=subprocess.STDOUT, env=env)
        exited, stop = child.poll, child.wait
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url, exited, log)
        yield url
    finally:
        child.terminate()
        try:
            stop(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if exited() is None:
            child.kill()
            stop()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve() as url:
        yield url


@pytest.fixture
def fresh_server(executable: str) -> Iterator[str]:
    """A server of its own, started for one test: no browser tab or page has run on it before."""
    with serve("streamlit-fresh.log") as url:
        yield url


def system_chromium() -> str:
    """The system Chromium's path, with Playwright there to drive it (else a skip, or a failure under CI)."""
    if sync_playwright is None:
        unavailable("the playwright package is not installed (pip install -r requirements-dev.txt)")
    return chromium()


@pytest.fixture(scope="module")
def executable() -> str:
    """The system Chromium; checked before the server starts, so a skip costs nothing. (The browser itself is
    conftest.py's `browser`, one per test process.)"""
    return system_chromium()


@contextmanager
def launched() -> Iterator:
    """The system Chromium, launched through Playwright."""
    executable_path = system_chromium()
    with sync_playwright() as pw:
        chromium_browser = pw.chromium.launch(executable_path=executable_path, args=CHROMIUM_ARGS)
        try:
            yield chromium_browser
        finally:
            chromium_browser.close()


def new_tab(browser, **options):
    """A tab in a browser context of its own (closed with it), 1400×1000 unless `options` (Playwright's context
    options) say otherwise; every page it opens counts its runs from the first (RUNS), for settle."""
    tab = browser.new_page(**{"viewport": {"width": 1400, "height": 1000}, **options})
    tab.set_default_timeout(RUN_TIMEOUT_MS)
    tab.add_init_script(RUNS)
    return tab


@pytest.fixture(scope="module")
def page(browser, server: str):
    tab = new_tab(browser)
    yield tab
    tab.close()


# ---------------------------------------------------------------- helpers


# Counts the app's script runs as they start (window.__pspRuns) and notes the count at each input the page receives (a
# click, a key, a changed value: window.__pspAction), so that settle waits for a run begun since the last input, even
# one that came and went before it looked, and never takes an earlier run for it. Installed in a tab's every page by
# new_tab, in others' by settle.
RUNS = """(() => {
  if (window.__pspRuns !== undefined) return;
  window.__pspRuns = 0;
  let last = null;
  new MutationObserver(() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const now = app && app.getAttribute('data-test-script-state');
    if (now === 'running' && last !== 'running') window.__pspRuns++;
    last = now;
  }).observe(document, {subtree: true, childList: true, attributes: true,
                        attributeFilter: ['data-test-script-state']});
  for (const kind of ['pointerdown', 'mousedown', 'click', 'keydown', 'input', 'change']) {
    document.addEventListener(kind, () => { window.__pspAction = window.__pspRuns; }, true);
  }
})()"""
NEW_RUN = "window.__pspRuns > (window.__pspAction || 0)"  # a run has started since the page's last input


def settle(tab) -> None:
    """Wait until the script run an action started has finished and nothing on screen is stale.

    The run starts a moment after the action; a fast one may have come and gone before this looks, which the page's
    count of runs shows (without it, as on a page opened before the count was installed, 1.5 s is allowed for the
    run to begin)."""
    started = tab.evaluate(f"window.__pspRuns === undefined ? null : {NEW_RUN}")
    if not started:
        try:
            if started is None:
                tab.locator('[data-testid="stApp"][data-test-script-state="running"]').wait_for(timeout=1500)
            else:
                tab.wait_for_function(NEW_RUN, timeout=1500)
        except PlaywrightTimeout:
            pass
    tab.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(timeout=RUN_TIMEOUT_MS)
    tab.wait_for_function("!document.querySelector('[data-stale=\"true\"]')", timeout=RUN_TIMEOUT_MS)
    tab.evaluate(RUNS)


def link_drops(tab, *parts: str) -> None:
    """Wait, up to 10 s, until the address holds none of `parts`: a run rewrites the link after it draws, so the
    address may change a moment after the page's text."""
    tab.wait_for_function("parts => parts.every(p => !location.search.includes(p))", arg=list(parts), timeout=10_000)


def screenshot(tab, name: str) -> None:
    """The whole page: Streamlit scrolls inside its main element, so the viewport grows to its height first."""
    viewport = tab.viewport_size
    height = tab.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    tab.set_viewport_size({"width": viewport["width"], "height": min(max(height, viewport["height"]), 10_000)})
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    tab.set_viewport_size(viewport)


def check_clean(tab, name: str) -> None:
    """No exception, error box or dialog (such as "Page not found") on the page; a screenshot either way."""
    screenshot(tab, name)
    assert not tab.get_by_role("dialog").count(), f"{name}: {tab.get_by_role('dialog').all_inner_texts()}"
    exceptions = tab.locator('[data-testid="stException"]').all_inner_texts()
    errors = tab.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not exceptions, f"{name}: {exceptions}"
    assert not errors, f"{name}: {errors}"


def open_page(tab, server: str, title: str, path: str) -> None:
    """Follow the navigation's link (keeps the session), else the page's URL path with the URL's settings.

    A link's text starts with its icon's name (a ligature such as "table", with no space), so only its
    end is matched.
    """
    link = tab.locator('[data-testid="stSidebarNav"] a').filter(has_text=re.compile(rf"{title}\s*$"))
    if link.count():
        link.first.click()
    else:
        tab.goto(f"{server}/{path}?{tab.url.partition('?')[2]}")
    settle(tab)
    tab.get_by_role("heading", level=1).first.wait_for()


def text(tab, pattern: str):
    return tab.get_by_text(re.compile(pattern)).first


REPORT_DOWNLOADS = re.compile("Download HTML report|Download JSON")
NO_RELEASE = "Nothing has been published on these people yet"
HOW_TO = "switch the sidebar's Mode to Publish, then press Release on the Pipeline page"


def metric_value(tab, label: str) -> str:
    """The shown value of the first metric whose label contains label."""
    metric = tab.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text().strip()


def assert_no_report(tab) -> None:
    """The Report page after teaching only: the way to a published release, and nothing to download."""
    tab.get_by_role("heading", name="Report", level=1).wait_for()
    text(tab, re.escape(NO_RELEASE)).wait_for()
    text(tab, re.escape(HOW_TO)).wait_for()
    assert not tab.get_by_role("button", name=REPORT_DOWNLOADS).count()
    assert not tab.locator('[data-testid="stDownloadButton"]').count()
    assert not tab.get_by_text("differentially private").count()


# ---------------------------------------------------------------- the walk through the app


def test_walk_through_every_page(page, server: str):
    # The Start page at the root; deep links on a fresh server are tested in test_browser_links.
    page.goto(f"{server}/?n={N}")
    settle(page)
    text(page, f"n = {N:,}").wait_for()

    open_page(page, server, "Data", "data")
    page.get_by_role("heading", name="Data", level=1).wait_for()
    text(page, f"{N:,} rows").wait_for()
    check_clean(page, "01-data")

    open_page(page, server, "Pipeline", "pipeline")
    text(page, "Stage 1").wait_for()
    text(page, "Stage 4").wait_for()
    check_clean(page, "02-pipeline")

    # ε is a slider over a log grid: one step down from the default 4, and the URL records it.
    page.locator('[data-testid="stSlider"]').filter(has_text="ε").get_by_role("slider").first.press("ArrowLeft")
    settle(page)
    page.wait_for_url(re.compile(r"[?&]epsilon=[0-9.]+"))
    epsilon = re.search(r"[?&]epsilon=([0-9.]+)", page.url).group(1)
    check_clean(page, "03-pipeline-epsilon")

    page.get_by_role("button", name=re.compile("fresh noise", re.I)).click()
    settle(page)
    text(page, "Stage 4").wait_for()
    check_clean(page, "04-pipeline-fresh-noise")

    # The fresh draw reran the private stages' fragment only; the data settings of the Data page must outlive it.
    open_page(page, server, "Data", "data")
    text(page, f"{N:,} rows").wait_for()
    assert re.search(rf"[?&]n={N}(&|$)", page.url), page.url

    open_page(page, server, "Compare", "compare")
    trials = page.get_by_label("Noise draws per method (K)", exact=True)
    trials.fill("3")
    trials.press("Enter")
    settle(page)
    page.get_by_role("button", name="Run comparison").click()
    settle(page)
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for()
    text(page, "Oracle · not private").wait_for()
    text(page, rf"\(ε, δ\) = \({re.escape(epsilon)}, ").wait_for()  # the Pipeline's ε carried over
    check_clean(page, "05-compare")

    open_page(page, server, "Report", "report")
    # The Pipeline's teaching runs came first, but they are not private releases: nothing to report.
    assert_no_report(page)
    check_clean(page, "06-report")


def test_teaching_alone_on_a_fresh_server_reports_nothing(browser, fresh_server: str):
    tab = new_tab(browser)
    try:
        tab.goto(f"{fresh_server}/pipeline?n={N}&noise_seed=7")
        settle(tab)
        text(tab, "Stage 4").wait_for()  # a teaching draw, seeded
        tab.get_by_role("button", name="Save teaching snapshot").wait_for()
        assert tab.locator('[data-testid="stSidebar"]').get_by_role("radio", name="Teaching").is_checked()
        open_page(tab, fresh_server, "Report", "report")
        assert_no_report(tab)
        check_clean(tab, "07-report-after-teaching")
    finally:
        tab.close()


def test_a_publish_release_reaches_the_report(page, server: str):
    page.goto(f"{server}/pipeline?n={N}&epsilon=8")  # a reload starts afresh
    settle(page)
    text(page, "Stage 4").wait_for()
    page.locator('[data-testid="stSidebar"]').get_by_text("Publish", exact=True).click()
    settle(page)
    text(page, "Nothing released yet").wait_for()
    page.get_by_role("button", name=re.compile(r"Release \(spends")).click()
    settle(page)
    text(page, r"spent ε = 8\b").wait_for()  # the sidebar's ledger
    released = metric_value(page, "Released value")
    check_clean(page, "08-pipeline-published")

    open_page(page, server, "Report", "report")
    page.get_by_role("heading", name="Report", level=1).wait_for()
    page.get_by_role("button", name="Download HTML report").wait_for()
    page.get_by_role("button", name="Download JSON").wait_for()
    assert metric_value(page, "Released value") == released
    text(page, "Privacy: whether any one row").wait_for()  # the first screen's words
    page.get_by_text("Technical appendix", exact=False).first.click()
    text(page, "differentially private").wait_for()
    text(page, "Privacy unit: a row").wait_for()
    assert not page.get_by_text(NO_RELEASE).count()
    check_clean(page, "09-report-published")

    # Back to teaching: a new draw does not change the Report.
    page.locator('[data-testid="stSidebar"]').get_by_text("Teaching", exact=True).click()
    settle(page)
    open_page(page, server, "Pipeline", "pipeline")
    text(page, "Stage 4").wait_for()
    page.get_by_role("button", name=re.compile("fresh noise", re.I)).click()
    settle(page)
    open_page(page, server, "Report", "report")
    page.get_by_role("button", name="Download HTML report").wait_for()
    assert metric_value(page, "Released value") == released


def test_the_spent_budget_survives_a_reload_and_a_new_browser(browser, server: str):
    """Publish, reload, open a fresh browser context: the ledger still holds the spend, and the cap holds."""
    url = f"{server}/pipeline?n=21000&epsilon=6"  # data of their own on this server's ledger (cap ε = 10)

    def publish_tab():
        tab = new_tab(browser)  # a browser context of its own: no cookie, no session of another tab
        tab.goto(url)
        settle(tab)
        text(tab, "Stage 4").wait_for()
        tab.locator('[data-testid="stSidebar"]').get_by_text("Publish", exact=True).click()
        settle(tab)
        return tab

    tab = publish_tab()
    tab.get_by_role("button", name=re.compile(r"Release \(spends")).click()
    settle(tab)
    text(tab, r"spent ε = 6\b").wait_for()
    tab.reload()
    settle(tab)
    tab.locator('[data-testid="stSidebar"]').get_by_text("Publish", exact=True).click()
    settle(tab)
    text(tab, r"spent ε = 6\b").wait_for()  # a reload resets nothing

    other = publish_tab()
    text(other, r"spent ε = 6\b").wait_for()
    # 6 + 6 > 10 on the same people: the button is off before any click, and the page says why.
    assert other.get_by_role("button", name=re.compile(r"Release \(spends")).is_disabled()
    text(other, r"Release is off: this draw costs each person ε = 6, δ = 1e-06, and what remains of the cap on these "
                r"people is ε = 4").wait_for()
    text(other, r"spent ε = 6\b").wait_for()
    tab.close()
    other.close()
