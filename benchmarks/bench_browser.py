"""Timing benchmark of the Pipeline page in a real browser: a Streamlit server, Playwright and Chromium.

The server runs in a subprocess as tests/test_browser.py's serve() starts it, with a privacy ledger of its own
in a temporary directory; the browser is the system Chromium (/usr/bin/chromium). After one load of n
synthetic rows (the data and the fit are then in the server's caches) it measures:

(a) an ε change: one key press on the ε slider, to the next value of its grid (first seven values up, each new
    to the server's caches, then seven back down, each seen before), until the page is fully updated;
(b) a new tab on the Pipeline page, with the data and the fit cached, until the page is fully drawn;
(c) a new tab on the Attacker's view (--attacker), the pair and its laws cached, until every figure is drawn;
(d) the peer: a new tab on a bare Streamlit page (a title, 20 metrics with tooltips, one SVG figure) served the
    same way, the least a new tab costs on this machine and browser.

"Fully updated" or "drawn" is measured in the page itself with performance.now(): a MutationObserver,
installed before Streamlit's own scripts, stamps every change inside a chart (`stPlotlyChart`, or an SVG figure
of ui.svg, `.psp-figure`), every SVG figure added, every change
of an element's staleness (`data-stale`) and every change of the app's script state. The page counts as
drawn once the script is not running, no element is stale, every Plotly chart has drawn its `.main-svg`, and nothing
of the above has changed for QUIET_MS; the figure is the stamp of the last such change, from the key press
(a) or from the start of the navigation (b). Every figure is a median, with the range.

    python benchmarks/bench_browser.py               # n = 10^6
    python benchmarks/bench_browser.py --n 20000     # smoke run
    python benchmarks/bench_browser.py --n 20000 --attacker   # and the Attacker's view
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the browser tests' server and Chromium, as they start them

from test_browser import CHROMIUM_ARGS, chromium, serve, settle  # noqa: E402

QUIET_MS = 1500  # no change for this long: the page is drawn
TIMEOUT_MS = 120_000  # the first load generates the data and fits them
STEPS = 7  # ε changes in each direction
TABS = 5
PEER = """import streamlit as st

st.title("A bare Streamlit page")
for i in range(20):
    st.metric(f"metric {i}", i, help="a tooltip")
st.markdown('<div class="psp-figure"><svg viewBox="0 0 100 10"><rect width="50" height="10"/></svg></div>',
            unsafe_allow_html=True)
"""

# Stamps the last change that belongs to drawing the page (window.__drawn), from the document's start.
OBSERVER = """
window.__drawn = {last: performance.now(), pressed: null};
document.addEventListener('keydown', () => { window.__drawn.pressed = performance.now(); }, true);
new MutationObserver((records) => {
  for (const r of records) {
    const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    const figure = Array.from(r.addedNodes || []).some((n) => n.nodeType === 1
        && (n.matches('.psp-figure') || n.querySelector('.psp-figure')));
    if (r.attributeName === 'data-stale' || r.attributeName === 'data-test-script-state' || figure
        || (el && el.closest('[data-testid="stPlotlyChart"], .psp-figure'))) {
      window.__drawn.last = performance.now();
      return;
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""

# True once the page is drawn (see the module docstring).
DRAWN = f"""() => {{
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  const pressed = window.__drawn.pressed;
  if (pressed !== null && window.__drawn.last <= pressed) return false;  // the change has not started yet
  const charts = document.querySelectorAll('[data-testid="stPlotlyChart"]');
  for (const c of charts) if (!c.querySelector('.js-plotly-plot .main-svg')) return false;
  const figures = charts.length + document.querySelectorAll('.psp-figure svg').length;
  return figures > 0 && performance.now() - window.__drawn.last >= {QUIET_MS};
}}"""


# What the page looks like, when it is not drawn in time.
STATUS = """() => ({
  state: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
  stale: document.querySelectorAll('[data-stale="true"]').length,
  charts: document.querySelectorAll('[data-testid="stPlotlyChart"]').length,
  drawn: document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot .main-svg').length,
  svg: document.querySelectorAll('.psp-figure svg').length,
  quiet_ms: performance.now() - window.__drawn.last, pressed: window.__drawn.pressed, last: window.__drawn.last,
})"""


def wait_drawn(tab) -> dict:
    try:
        tab.wait_for_function(DRAWN, timeout=TIMEOUT_MS, polling=100)
    except PlaywrightTimeout:
        raise SystemExit(f"the page was not drawn within {TIMEOUT_MS / 1e3:g} s: {tab.evaluate(STATUS)}") from None
    return tab.evaluate("() => ({...window.__drawn, charts: document.querySelectorAll('.js-plotly-plot').length"
                        " + document.querySelectorAll('.psp-figure svg').length})")


def epsilon_slider(tab):
    return tab.locator('[data-testid="stSlider"]').filter(has_text="ε").get_by_role("slider").first


def epsilon_changes(tab) -> list[tuple[str, float, int]]:
    """(direction, ms from the key press to the last change, charts) of each ε change."""
    out = []
    for key in ["ArrowRight"] * STEPS + ["ArrowLeft"] * STEPS:
        epsilon_slider(tab).press(key)
        drawn = wait_drawn(tab)
        out.append((key, drawn["last"] - drawn["pressed"], drawn["charts"]))
    return out


def new_tabs(context, url: str) -> list[tuple[float, int]]:
    """(ms from the navigation's start to the last change, charts) of each new tab."""
    out = []
    for _ in range(TABS):
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(url)
        drawn = wait_drawn(tab)
        out.append((drawn["last"], drawn["charts"]))
        tab.close()
    return out


def spread(values: list[float]) -> str:
    return f"**{statistics.median(values):.0f} ms** ({min(values):.0f} to {max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--attacker", action="store_true", help="also new tabs on the Attacker's view")
    args = parser.parse_args()
    url_path = f"/pipeline?n={args.n}"  # the Pipeline page, by its URL path
    folder = Path(tempfile.mkdtemp(prefix="psp-bench-"))
    peer = folder / "peer.py"
    peer.write_text(PEER)
    with serve("streamlit-bench.log", folder / "ledger.sqlite3") as server, \
            serve("streamlit-bench-peer.log", script=peer) as peer_server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.add_init_script(OBSERVER)
        tab = context.new_page()
        tab.set_default_timeout(TIMEOUT_MS)
        tab.goto(server + url_path)
        settle(tab)
        first = wait_drawn(tab)
        changes = epsilon_changes(tab)
        tab.close()
        tabs = new_tabs(context, server + url_path)
        attacker = new_tabs(context, server + f"/attacker?n={args.n}") if args.attacker else None
        bare = new_tabs(context, peer_server + "/")
        browser.close()
    every = [ms for _, ms, _ in changes]
    fresh = [ms for key, ms, _ in changes if key == "ArrowRight"]
    print(f"n = {args.n:,}, synthetic robust, d = 5; charts drawn: first load {first['charts']}, "
          f"after the ε changes {sorted({c for *_, c in changes})}, new tabs {sorted({c for _, c in tabs})}")
    print("| figure | measured |")
    print("|---|---|")
    print(f"| first load (data generated and fitted), from navigation | {first['last']:.0f} ms |")
    print(f"| ε change → fully updated, median of {len(every)} | {spread(every)} |")
    print(f"| of which to ε values new to the server, median of {len(fresh)} | {spread(fresh)} |")
    print(f"| new tab, data cached → fully drawn, median of {len(tabs)} | {spread([ms for ms, _ in tabs])} |")
    if attacker is not None:  # the first tab computed the pair; the rest read it from the server's caches
        print(f"| new tab on the Attacker's view, pair cached, median of {len(attacker) - 1} | "
              f"{spread([ms for ms, _ in attacker[1:]])} (first, computing the pair: {attacker[0][0]:.0f} ms; "
              f"figures {sorted({c for _, c in attacker})}) |")
    print(f"| peer: new tab on a bare Streamlit page, median of {len(bare)} | {spread([ms for ms, _ in bare])} |")
    ratio = statistics.median(ms for ms, _ in tabs) / statistics.median(ms for ms, _ in bare)
    print(f"| new tab ÷ peer | {ratio:.2f} |")
    print("individual ε changes (ms):", ", ".join(f"{ms:.0f}" for ms in every))
    print("individual new tabs (ms):", ", ".join(f"{ms:.0f}" for ms, _ in tabs))
    print("individual peer tabs (ms):", ", ".join(f"{ms:.0f}" for ms, _ in bare))


if __name__ == "__main__":
    main()
