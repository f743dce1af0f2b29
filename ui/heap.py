"""The server's long-lived objects, kept out of the garbage collector's full collections.

A Streamlit server collects all three generations after every script run (the hidden option runner.postScriptGC),
in the run's own thread. Such a collection visits every object the collector tracks, and most of them live as long
as the process: the modules of numpy, scipy, pandas, numba, plotly and the app, their functions, classes and
tables, about 270,000 objects once the Pipeline has run. Visiting them took about 0.12 s of CPU per run, most of
what a new session's first run cost the server (docs/benchmarks.md, "A class at once").

`settle()` ends app.py's runs: when a run has loaded modules that no earlier settle saw, it collects once and
freezes what is left (gc.freeze), so later collections skip those objects and visit only what sessions make
after them. Reference counting still frees a frozen object; only a reference cycle among frozen objects outlives
its use. That bounds what freezing may keep: it happens only when new code is loaded (a page's first run in the
process, a feature reached for the first time), and it takes along just the sessions alive at that moment.
"""

from __future__ import annotations

import gc
import sys
import threading

from streamlit import runtime

_lock = threading.Lock()
_settled = 0  # len(sys.modules) at the last freeze


def settle() -> bool:
    """Collect and freeze once the modules loaded so far have grown; True when it froze. Only on a served app
    (Streamlit's AppTest neither collects after a run nor keeps a server's heap)."""
    global _settled
    if len(sys.modules) <= _settled or not runtime.exists():
        return False
    with _lock:
        if len(sys.modules) <= _settled:  # another session's run froze them meanwhile
            return False
        gc.collect()  # garbage is not frozen
        gc.freeze()
        _settled = len(sys.modules)
        return True
