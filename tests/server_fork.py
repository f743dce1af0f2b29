"""App servers forked from one process that has already imported the libraries every server imports.

multiprocessing's forkserver imports PRELOAD once per test process; each server is a child forked from it that runs
Streamlit's own command line (`streamlit run serve.py …`) with an environment, a working folder and a log of its own.
It has its own process, runtime, sessions and caches, as a freshly started server has, and skips 1.5 to 5 core-s of
imports at every start (docs/benchmarks.md). The app's own modules are not preloaded: each server imports them under
its own environment.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

# The costliest of what a server's start imports (python -X importtime), none of which reads the app's environment.
PRELOAD = ["streamlit.web.cli", "scipy.stats", "scipy.optimize", "scipy.signal", "pandas", "pyarrow",
           "plotly.graph_objects", "dp_accounting"]
_FORKS = multiprocessing.get_context("forkserver")
_FORKS.set_forkserver_preload([__name__, *PRELOAD])


def _streamlit(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
    """The child: `streamlit <argv>` in `cwd` under `env`, its output to `log`."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    with open(log, "wb") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    sys.argv = ["streamlit", *argv]
    from streamlit.web.cli import main

    main(prog_name="streamlit")


def start(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> multiprocessing.Process:
    """`streamlit <argv>` forked from the preloaded process; a daemon, so it ends with the test process at latest."""
    process = _FORKS.Process(target=_streamlit, args=(argv, env, cwd, log), daemon=True)
    process.start()
    return process
