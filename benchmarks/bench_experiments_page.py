"""The Experiments page's first screen in a real browser, as a lecturer meets it: a fresh server's first visit, then
warm visits in new tabs, each timed from the navigation to the page settled with its heading drawn.

A Streamlit server of the app (tests/test_browser.serve: its own ledger, its log in test-artifacts/) and Debian's
Chromium through Playwright at 1280×720; --visits tabs one after the other. Prints the first visit and the median of
the others (docs/benchmarks.md, "The Experiments page's first screen").

    python benchmarks/bench_experiments_page.py [--visits 6]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser import CHROMIUM_ARGS, serve, settle  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--visits", type=int, default=6)
    args = ap.parse_args()
    with serve("bench-experiments.log") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        times = []
        for _ in range(args.visits):
            tab = browser.new_page(viewport={"width": 1280, "height": 720})
            start = time.perf_counter()
            tab.goto(url + "/experiments")
            settle(tab)
            tab.get_by_role("heading", name="Experiments", level=1).wait_for()
            times.append(time.perf_counter() - start)
            tab.close()
        browser.close()
    print(f"| first visit (s) | warm median (s) | every visit (s) |\n|---|---|---|\n| {times[0]:.2f} | "
          f"{statistics.median(times[1:]):.2f} | {', '.join(f'{t:.2f}' for t in times)} |")


if __name__ == "__main__":
    main()
