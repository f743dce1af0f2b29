"""A class's shared link on a fresh clone, in Chromium: the Pipeline link is the server's first request (a student
who clicks it before the lecturer opens anything), on a clone whose compiled kernels were never built, against a
warm new tab on the Pipeline on the same server (the median of three), each tab in a browser context of its own (a
student's browser has never fetched this server's front end); the warm tab with the front end cached is printed
beside it. Each round clones the repository afresh, so
nothing a previous round built is reused; the figure is the median of the rounds. "Drawn": the app's script no
longer running, nothing stale, the page's heading shown (tests/test_browser.py's settle).

    python benchmarks/bench_cold_start.py [--rounds 3] [--n 20000] [--start-first]

--start-first opens the Start page first and waits --pause seconds, as a lecturer who prepares does.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser import CHROMIUM_ARGS, chromium, settle  # noqa: E402

TARGET = 2.0  # the first Pipeline at most twice a warm tab
WARM_AFTER = 15.0  # seconds after the first Pipeline before the warm tabs


def paint(browser, url: str, cached: bool = False) -> float:
    """Seconds from a new tab's navigation to its page drawn: in a browser context of its own, as a student's
    browser that never opened this server (it fetches the front end's code), or, cached, in the browser's default
    context, which keeps what earlier tabs fetched."""
    size = {"width": 1400, "height": 1000}
    context = browser.contexts[0] if cached and browser.contexts else browser.new_context(viewport=size)
    tab = context.new_page()
    start = time.perf_counter()
    tab.goto(url)
    settle(tab)
    tab.get_by_role("heading", level=1).first.wait_for()
    took = time.perf_counter() - start
    tab.close()
    if not cached:
        context.close()
    return took


def one_round(browser, args: argparse.Namespace) -> tuple[float, float, float]:
    """(the first Pipeline, the median warm tab, the median warm tab with the front end cached) on a server of a
    fresh clone."""
    clone = Path(tempfile.mkdtemp(prefix="psp-cold-")) / "clone"
    subprocess.run(["git", "clone", "-q", str(args.source), str(clone)], check=True)
    spec = importlib.util.spec_from_file_location("clone_browser", clone / "tests" / "test_browser.py")
    clone_browser = importlib.util.module_from_spec(spec)  # the clone's own server helper: it serves the clone
    spec.loader.exec_module(clone_browser)
    try:
        with clone_browser.serve("cold-start.log", script=Path(args.entry)) as url:
            if args.start_first:
                paint(browser, f"{url}/?n={args.n}")
                time.sleep(args.pause)
            first = paint(browser, f"{url}/pipeline?n={args.n}")
            time.sleep(WARM_AFTER)  # a warm tab: whatever the server builds in the background is done
            warm = statistics.median(paint(browser, f"{url}/pipeline?n={args.n}") for _ in range(3))
            paint(browser, f"{url}/pipeline?n={args.n}", cached=True)  # fills the cache
            cached = statistics.median(paint(browser, f"{url}/pipeline?n={args.n}", cached=True) for _ in range(3))
    finally:
        shutil.rmtree(clone.parent, ignore_errors=True)
    return first, warm, cached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--source", type=Path, default=ROOT, help="the repository to clone (default: this one)")
    parser.add_argument("--entry", default="serve.py", help="the script `streamlit run` starts (README: serve.py)")
    parser.add_argument("--start-first", action="store_true", help="open the Start page first, then pause")
    parser.add_argument("--pause", type=float, default=10.0, help="seconds between the Start page and the Pipeline")
    args = parser.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        rounds = [one_round(browser, args) for _ in range(args.rounds)]
        browser.close()
    for i, (first, warm, cached) in enumerate(rounds, 1):
        print(f"round {i}: first Pipeline {first:.2f} s, warm tab {warm:.2f} s (front end cached: {cached:.2f} s), "
              f"ratio {first / warm:.2f}")
    first, warm, cached = (statistics.median(r[k] for r in rounds) for k in range(3))
    ratio = statistics.median(r[0] / r[1] for r in rounds)
    print(f"median: first Pipeline {first:.2f} s; warm tab {warm:.2f} s (front end cached: {cached:.2f} s); ratio "
          f"{ratio:.2f} (target <= {TARGET:g}: {'met' if ratio <= TARGET else 'NOT met'}); against the cached tab "
          f"{statistics.median(r[0] / r[2] for r in rounds):.2f}")


if __name__ == "__main__":
    main()
