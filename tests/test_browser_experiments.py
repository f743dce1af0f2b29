"""The Experiments page in a real browser: a server of its own whose quick preset is small (one repetition, d = 5)
and whose experiments and results directories are temporary, driven by Playwright and the system Chromium.

The fixtures and helpers are test_browser's; like those tests, these skip without Chromium or Playwright (and fail
under CI=true). Screenshots and the server's log go to test-artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from test_browser import check_clean, executable, new_tab, open_page, serve, settle, text  # noqa: F401

pytestmark = pytest.mark.browser  # a real browser: the full lane only

SMALL_PRESET = {"PSP_EXPERIMENTS_QUICK_REPS": "1", "PSP_EXPERIMENTS_DIMS": "5"}
# The text of the first chart's titles and legend, and whether each lies outside the chart's own box (clipped).
CHART_TITLES = """() => {
    const chart = document.querySelector('[data-testid="stPlotlyChart"]');
    const box = chart.querySelector('.main-svg').getBoundingClientRect();
    return [...chart.querySelectorAll('.infolayer text, .legendtitletext')].map(t => {
        const r = t.getBoundingClientRect();
        return [t.textContent, r.left < box.left || r.right > box.right || r.top < box.top || r.bottom > box.bottom];
    });
}"""


@pytest.fixture(scope="module")
def experiments_server(executable: str, tmp_path_factory) -> Iterator[str]:  # noqa: F811
    """serve() passes its own environment on to the server: set the page's variables only while it starts."""
    root = tmp_path_factory.mktemp("experiments")
    env = {**SMALL_PRESET, "PSP_EXPERIMENTS_DIR": str(root / "runs"), "PSP_RESULTS_DIR": str(root / "results")}
    with ExitStack() as stack:
        with pytest.MonkeyPatch.context() as mp:
            for name, value in env.items():
                mp.setenv(name, value)
            url = stack.enter_context(serve("streamlit-experiments.log", ledger=root / "ledger.sqlite3"))
        yield url


def test_quick_preset_of_fig1_draws_its_chart(browser, experiments_server: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(f"{experiments_server}/?n=2000")  # the root runs app.py, whose navigation lists the page
        settle(tab)
        open_page(tab, experiments_server, "Experiments", "experiments")
        text(tab, "nothing here touches your data or your privacy budget").wait_for()
        text(tab, "No full run recorded for this figure").wait_for()
        assert not tab.locator('[data-testid="stPlotlyChart"]').count()
        tab.get_by_role("button", name="Run the quick preset").first.click()  # the first tab, Fig. 1
        settle(tab)
        tab.locator('[data-testid="stPlotlyChart"]').first.wait_for()
        tab.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()  # plotly has drawn it
        text(tab, "Your last quick run, quick preset: 1 repetition, reduced grid").wait_for()
        tab.locator('[data-testid="stDataFrame"]').first.wait_for()
        check_clean(tab, "10-experiments-fig1-quick")
        tab.set_viewport_size({"width": 1280, "height": 720})
        tab.wait_for_timeout(500)  # plotly redraws at the new width
        shown = dict(tab.evaluate(CHART_TITLES))
        assert {"Relative error |λ̂ − λmin|/λmin", "P(λ̂min = 0)", "Rows per dimension n/d", "Method"} <= set(shown)
        assert not [t for t, clipped in shown.items() if clipped or "_" in t], shown

        tab.get_by_role("tab", name="Fig. 6").click()
        text(tab, "HYPOTHESIS, not proven").wait_for()
        check_clean(tab, "11-experiments-fig6")
    finally:
        tab.close()
