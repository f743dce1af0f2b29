"""Shared fixtures: small prepared problems (fits are deterministic, so they are reused)."""

import threading

import pytest
from apptest import new_app
from streamlit import config

from core.data import synthetic
from core.mechanisms.pipeline import prepare

# In-process app runs show every error in full: a test must see an exception, not the app's one-sentence notice.
config.set_option("client.showErrorDetails", "full")


def pytest_collection_modifyitems(items: list) -> None:
    """Files with browser tests first, then files with slow ones, each group in its own order: the full lane hands
    whole files to two workers (--dist loadfile, in this order: --no-loadscope-reorder, or xdist would hand out the
    files with the most tests first), and a long file picked up last leaves the other worker idle while it runs. The
    order of the tests within a file is kept."""
    weight: dict = {}
    for item in items:
        rank = 2 if item.get_closest_marker("browser") else 1 if item.get_closest_marker("slow") else 0
        weight[item.path] = max(weight.get(item.path, 0), rank)
    items.sort(key=lambda item: -weight[item.path])


@pytest.fixture(autouse=True)
def own_ledger(tmp_path, monkeypatch):
    """Every test charges a privacy ledger file of its own, never the user's default one."""
    monkeypatch.setenv("PSP_LEDGER", str(tmp_path / "ledger.sqlite3"))


@pytest.fixture(autouse=True)
def on_this_machine(monkeypatch):
    """AppTest has no network peer (its client's address is a mock): its browser is taken to be on the server's
    machine, as for someone running the app on their own computer. Tests of readers and analysts say otherwise."""
    monkeypatch.setattr("ui.access._on_this_machine", lambda: True)


@pytest.fixture
def app():
    """apptest.new_app: the app in Streamlit's AppTest, not yet run (every page test opens it this way)."""
    return new_app


@pytest.fixture
def race():
    """Run `draw` in k threads released together by a barrier, and wait for all of them."""

    def run(draw, k: int = 8) -> None:
        start = threading.Barrier(k)

        def together() -> None:
            start.wait()
            draw()

        threads = [threading.Thread(target=together) for _ in range(k)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    return run


@pytest.fixture(scope="session")
def robust_problem():
    """Synthetic robust regression, n = 20000, d = 3: the test (14) passes at eps = 4."""
    data = synthetic(20_000, 3, "robust", theta_norm=1.0, seed=11)
    return prepare(data.X, data.y, "robust", "cube", feature_names=data.feature_names)


@pytest.fixture(scope="session")
def logistic_problem():
    data = synthetic(20_000, 3, "logistic", theta_norm=1.0, seed=12)
    return prepare(data.X, data.y, "logistic", "cube", feature_names=data.feature_names)


@pytest.fixture
def downloads(monkeypatch):
    """(file name, bytes) of every download an AppTest page offers, by MIME type (the last one of each)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    saved: dict[str, tuple[str | None, bytes]] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        saved[mimetype] = (filename, data.encode() if isinstance(data, str) else data)
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return saved


def binomial_pvalue(sizes, n: int, q: float) -> float:
    """Chi-square p-value of observed sizes against Binomial(n, q), the tails merged so every bin expects >= 5."""
    import numpy as np
    from scipy import stats

    ks = np.arange(n + 1)
    expected = len(sizes) * stats.binom.pmf(ks, n, q)
    keep = expected >= 5
    lo, hi = ks[keep][0], ks[keep][-1]
    observed = np.bincount(np.clip(sizes, lo, hi) - lo, minlength=hi - lo + 1)
    merged = expected[keep].copy()
    merged[0] += expected[:lo].sum()
    merged[-1] += expected[hi + 1 :].sum()
    return float(stats.chisquare(observed, merged).pvalue)


@pytest.fixture(scope="session")
def browser():
    """The system Chromium through Playwright (test_browser.launched), one per test process: a launch costs about a
    second of CPU, and every test opens its pages in browser contexts of its own, which share no cookie or storage."""
    from test_browser import launched

    with launched() as chromium_browser:
        yield chromium_browser


@pytest.fixture
def census_site(tmp_path, monkeypatch):
    """A census site on this machine: a local HTTP server, named by core.data.acs.CENSUS_SITE, serving the folder it
    returns as the Census Bureau lays out its zips (<year>/<horizon>/csv_p<state>.zip). No network is needed."""
    import functools
    import http.server

    from core.data import acs

    folder = tmp_path / "census-site"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the test's output is the test's, not the server's log
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(acs, "CENSUS_SITE", f"http://127.0.0.1:{server.server_address[1]}")
    yield folder
    server.shutdown()
    server.server_close()

