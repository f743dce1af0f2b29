"""A class opening the shared link at once: server CPU per new Pipeline session, against a bare Streamlit page.

A Streamlit server of the app runs in a subprocess with a ledger of its own. One tab loads the Pipeline first, so
the data and the fit are in the server's caches; then K tabs (default 30) open the Pipeline together, each in a
browser context of its own (a new session), and the server's CPU time (user + system, from /proc/<pid>/stat) is
read before and after they have all been drawn. The peer is the same with a bare Streamlit page (bench_browser's
PEER: a title, 20 metrics, one SVG figure), the least a new session costs on this machine. Prints CPU seconds per
new session for both, and their ratio; it stops if any tab shows an exception or an error box.

With --widgets, a second peer: the bare page with one of each kind of element the Pipeline's first render draws
(WIDGETS: a radio, a toggle, sliders, a number input, a button, three downloads, a static table, LaTeX). A new
browser fetches the front-end code of every kind of element it is shown, one request each (the Pipeline's
first render: about 125 requests, the bare page's 78, this peer's 122), so this is the least a new session of a
page drawing these kinds costs, whatever the page computes.

With --proxy, the Pipeline again behind nginx (which must be installed) serving Streamlit's static files itself and
passing the rest on, as the README's lecture-hall setup does; the figure is both servers' CPU (Streamlit's process,
nginx's master and worker).

    python benchmarks/bench_sessions.py [--sessions 30] [--n 20000] [--widgets] [--proxy]
"""

from __future__ import annotations

import argparse
import getpass
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_browser import PEER  # noqa: E402
from test_browser import CHROMIUM_ARGS, chromium, free_port, settle  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
OWN_EPSILON = (0.5, 0.7, 0.9, 1.1, 1.3, 1.6, 2.0, 2.4, 3.0, 3.6, 4.5, 6.0)  # a class's, one per student

WIDGETS = PEER + """import pandas as pd

st.radio("mode", ["a", "b"], horizontal=True)
st.checkbox("check")
st.toggle("toggle")
st.slider("slider", 0.0, 1.0, 0.5)
st.select_slider("select slider", [1, 2, 4], 2)
st.number_input("number", value=1.0)
st.button("button")
for i in range(3):
    st.download_button(f"download {i}", f"text {i}", f"file{i}.txt", on_click="ignore")
st.table(pd.DataFrame({"a": ["1", "2"], "b": ["x", "y"]}), hide_index=True)
st.markdown(r"math $\\varepsilon = 1$, `code` and *italic*")
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def start(script: Path, ledger: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, "PSP_LEDGER": str(ledger)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the server did not start")


NGINX = """user {user};
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/nginx.log;
events {{ worker_connections 1024; }}
http {{
  include /etc/nginx/mime.types;
  access_log off;
  sendfile on;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  server {{
    listen 127.0.0.1:{port};
    location /static/ {{ alias {static}/static/; expires 1y; }}
    location / {{
      proxy_pass {upstream};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_read_timeout 1d;
    }}
  }}
}}
"""


def proxied(upstream: str, folder: Path) -> tuple[subprocess.Popen, str]:
    """nginx in front of a server: Streamlit's static files (the front end's code, most of a new browser's requests)
    served from its package folder, everything else passed on, the websocket included (README, "A class at once")."""
    import streamlit

    port = free_port()
    conf = folder / "nginx.conf"
    # The worker reads the package's files where this process can: as this process's user.
    conf.write_text(NGINX.format(user=getpass.getuser(), folder=folder, port=port, upstream=upstream,
                                 static=Path(streamlit.__file__).parent / "static"))
    proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(folder)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    return proc, f"http://127.0.0.1:{port}"


def tree_cpu(pid: int) -> float:
    """cpu_seconds of a process and its children (nginx's master and its worker)."""
    kids = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == pid]
    return cpu_seconds(pid) + sum(cpu_seconds(k) for k in kids)


def _parent(p: Path) -> int | None:
    try:
        return int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def per_session(browser, script: Path, path: str, sessions: int, folder: Path, proxy: bool = False,
                own_epsilon: bool = False) -> tuple[float, float]:
    """(CPU seconds the server spends per new session, seconds until the last tab is drawn), `sessions` of them
    opened together after one warm-up; with proxy, the server's and nginx's together; with own_epsilon, each tab's
    link sets an ε of its own (so each session draws fresh private stages, as a class does)."""
    proc, url = start(script, folder / f"{script.stem}.sqlite3")
    front = None
    if proxy:
        front, url = proxied(url, folder)
    try:
        warm = browser.new_context()
        tab = warm.new_page()
        tab.goto(url + path)
        settle(tab)
        before = cpu_seconds(proc.pid) + (0.0 if front is None else tree_cpu(front.pid))
        contexts = [browser.new_context() for _ in range(sessions)]
        tabs = [c.new_page() for c in contexts]
        opened = time.perf_counter()
        for i, t in enumerate(tabs):
            t.goto(url + path + (f"&epsilon={OWN_EPSILON[i % len(OWN_EPSILON)]}" if own_epsilon else ""),
                   wait_until="commit")
        for t in tabs:
            settle(t)
        last = time.perf_counter() - opened
        time.sleep(1.0)  # the last websocket messages
        spent = cpu_seconds(proc.pid) + (0.0 if front is None else tree_cpu(front.pid)) - before
        broken = sum(t.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count()
                     for t in tabs)
        if broken:  # a session that failed would cost less and prove nothing
            raise SystemExit(f"{broken} exception or error boxes on the {sessions} tabs of {script.name}")
        for c in [warm, *contexts]:
            c.close()
        return spent / sessions, last
    finally:
        for p in (proc, front):
            if p is not None:
                p.terminate()
                p.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=1, help="rounds of both servers; the figures are their medians")
    ap.add_argument("--own-epsilon", action="store_true", help="each tab's link with an ε of its own (a class)")
    ap.add_argument("--widgets", action="store_true", help="also the bare page with the Pipeline's kinds of elements")
    ap.add_argument("--proxy", action="store_true", help="also the Pipeline behind nginx serving the static files")
    a = ap.parse_args()
    pipeline = f"/pipeline?n={a.n}"
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp)
        peer = folder / "peer.py"
        peer.write_text(PEER)
        kinds = folder / "widgets.py"
        kinds.write_text(WIDGETS)
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        for _ in range(a.rounds):
            app = per_session(browser, ROOT / "serve.py", pipeline, a.sessions, folder, own_epsilon=a.own_epsilon)
            bare = per_session(browser, peer, "/", a.sessions, folder)
            behind = per_session(browser, ROOT / "serve.py", pipeline, a.sessions, folder, True, a.own_epsilon) \
                if a.proxy else None
            widgets = per_session(browser, kinds, "/", a.sessions, folder) if a.widgets else None
            rows.append((app, bare, behind, widgets))
            print(f"round: Pipeline {app[0]:.3f} s (last drawn {app[1]:.1f} s), bare page {bare[0]:.3f} s, ratio "
                  f"{app[0] / bare[0]:.2f}", flush=True)
        browser.close()
    med = statistics.median
    app, bare = med(r[0][0] for r in rows), med(r[1][0] for r in rows)
    own = ", each with its own ε" if a.own_epsilon else ""
    print(f"| server CPU per new Pipeline session ({a.sessions} opened together{own}, n = {a.n:,}, median of "
          f"{a.rounds}) | {app:.3f} s (last drawn after {med(r[0][1] for r in rows):.1f} s) |")
    print(f"| server CPU per new session of a bare Streamlit page | {bare:.3f} s |")
    print(f"| ratio (median of the rounds' ratios) | {med(r[0][0] / r[1][0] for r in rows):.2f} |")
    if a.proxy:
        print(f"| the Pipeline behind nginx serving the static files (both servers' CPU) | "
              f"{med(r[2][0] for r in rows):.3f} s |")
    if a.widgets:
        print(f"| server CPU per new session of a bare page with the Pipeline's kinds of elements | "
              f"{med(r[3][0] for r in rows):.3f} s |")


if __name__ == "__main__":
    main()
