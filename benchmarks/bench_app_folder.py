"""A curator's folder in the app, in Chromium, against the same shape of data in memory: the seconds a user waits for
the Pipeline's link in publish mode to be drawn on a fresh server (the folder: one pass for the response's values and
the fit's passes, all read in blocks; in memory: the draw and the fit), for the first Release (the folder: its people
keyed by two external sorts, then the private stages), and for a second Release (the key kept). Each round starts a
server of its own for each route; the figures are medians over the rounds.

    python benchmarks/bench_app_folder.py [--rounds 3] [--n 1000000] [--d 17]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402
from test_browser import CHROMIUM_ARGS, chromium, serve, settle  # noqa: E402

from core.data.synthetic import write_folder  # noqa: E402

RELEASE = re.compile(r"Release \(spends")


def timed(tab, act, spent: str | None = None) -> float:
    start = time.perf_counter()
    act()
    settle(tab)
    if spent is None:
        tab.get_by_text("Nothing released yet").first.wait_for()
    else:
        tab.get_by_text(re.compile(rf"spent ε = {spent}\b")).first.wait_for()
    return time.perf_counter() - start


def one_route(browser, link: str, log: str, ledger: Path) -> tuple[float, float, float]:
    with serve(log, ledger=ledger) as url:
        tab = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        tab.set_default_timeout(900_000)
        first = timed(tab, lambda: tab.goto(url + link))
        button = tab.get_by_role("button", name=RELEASE)
        release = timed(tab, button.click, "1")
        again = timed(tab, button.click, "2")
        tab.context.close()
    return first, release, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=17)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="psp-app-folder-"))
    write_folder(str(work / "sim"), args.n, args.d, "logistic", theta_norm=2.0, seed=8)
    os.environ["PSP_FOLDERS"] = f"sim={work / 'sim'}"
    os.environ["PSP_CAP_EPSILON"] = "100"
    budget = "mode=publish&epsilon=1&delta=1e-9"
    links = {"folder": f"/pipeline?source=folder&folder=sim&upload_loss=logistic&{budget}",
             "memory": f"/pipeline?source=synthetic_logistic&n={args.n}&d={args.d}&theta_norm=2&{budget}"}
    figures: dict[str, list[tuple[float, float, float]]] = {k: [] for k in links}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        for r in range(args.rounds):
            for route, link in links.items():
                figures[route].append(one_route(browser, link, f"bench-app-{route}.log", work / f"{route}-{r}.sqlite3"))
                print(route, [f"{x:.1f}" for x in figures[route][-1]], flush=True)
        browser.close()
    print(f"n = {args.n:,}, d = {args.d}, median of {args.rounds} rounds (seconds): first link, first Release, "
          "second Release")
    for route, rows in figures.items():
        print(f"{route:>7}: " + "  ".join(f"{statistics.median(col):6.1f}" for col in zip(*rows, strict=True)))


if __name__ == "__main__":
    main()
