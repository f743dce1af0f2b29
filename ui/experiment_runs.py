"""The Experiments page's runs, without Streamlit: where the result files live, the quick preset run as its own
process, and the checks every CSV passes before it is drawn.

Every function takes the environment as an argument so that it can be tested alone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from core.errors import InputError, PspError
from core.teaching.experiments import plan, read_rows
from ui.experiment_claims import tab_label

ROOT = Path(__file__).resolve().parents[1]
MAX_BYTES = 5_000_000  # a full figure's CSV is a few hundred rows (tens of kB); more is not one of ours
MAX_ROWS = 5_000
MAX_PANELS, MAX_METRICS, MAX_METHODS = 12, 8, 12  # bounds the subplot grid a file can ask for
_PROGRESS = re.compile(r"^\[[^\]]*\] (\d+)/(\d+) ")


# ---------------------------------------------------------------- where files live


def results_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The recorded full runs: PSP_RESULTS_DIR, else the repository's docs/results."""
    return Path(env.get("PSP_RESULTS_DIR") or ROOT / "docs" / "results")


def experiments_dir(env: Mapping[str, str] = os.environ) -> Path:
    """Where the app writes quick runs (and their task cache): PSP_EXPERIMENTS_DIR, else ~/.cache/psp/experiments."""
    return Path(env.get("PSP_EXPERIMENTS_DIR") or Path.home() / ".cache" / "psp" / "experiments")


def quick_dir(figure: str, env: Mapping[str, str] = os.environ) -> Path:
    """One subfolder per figure, so each figure's CSV, HTML and cache stay apart."""
    return experiments_dir(env) / figure


def quick_options(env: Mapping[str, str] = os.environ) -> dict:
    """reps= and dims= for the quick preset: PSP_EXPERIMENTS_QUICK_REPS and PSP_EXPERIMENTS_DIMS (such as "5,10")
    when the deployment sets them, else run_figure's own quick defaults (None)."""
    reps_text = env.get("PSP_EXPERIMENTS_QUICK_REPS", "").strip()
    dims_text = env.get("PSP_EXPERIMENTS_DIMS", "").strip()
    try:
        reps = int(reps_text) if reps_text else None
        dims = tuple(int(p) for p in dims_text.split(",")) if dims_text else None
    except ValueError:
        raise InputError("PSP_EXPERIMENTS_QUICK_REPS takes a whole number and PSP_EXPERIMENTS_DIMS whole numbers "
                         "separated by commas; fix the server's environment") from None
    if (reps is not None and reps < 1) or (dims is not None and min(dims) < 1):
        raise InputError("PSP_EXPERIMENTS_QUICK_REPS and PSP_EXPERIMENTS_DIMS must be at least 1")
    return dict(reps=reps, dims=dims)


def preset(figure: str, env: Mapping[str, str] = os.environ) -> dict:
    """quick_options for one figure: a figure whose d is fixed (the census figures) refuses dims, so it runs
    without them rather than not at all."""
    options = quick_options(env)
    if options["dims"] is not None:
        try:
            plan(figure, quick=True, reps=options["reps"], dims=options["dims"])
        except PspError:
            options["dims"] = None  # any other problem, run_figure reports it
    return options


def quick_command(figure: str, out: Path, env: Mapping[str, str] = os.environ) -> list[str]:
    """The command line of the quick preset (`python -m core experiment ... --quick --jobs 2`), with the
    deployment's preset options."""
    options = preset(figure, env)
    cmd = [sys.executable, "-m", "core", "experiment", figure, "--quick", "--jobs", "2", "--out", str(out)]
    if options["reps"] is not None:
        cmd += ["--reps", str(options["reps"])]
    if options["dims"] is not None:
        cmd += ["--dims", ",".join(map(str, options["dims"]))]
    return cmd


def run_quick(figure: str, out: Path, log: Callable[[str], None]) -> dict:
    """Run the quick preset as its own process, passing its progress lines to log; what the command printed.

    A separate process rather than workers of the server: the command is single-threaded, so its workers
    start cleanly, and when the page is interrupted (a click mid-run) the whole process group is stopped at
    once; the tasks already finished stay in the cache. A failure raises InputError with the command's own
    one-line message (it never quotes data), never its traceback.
    """
    proc = subprocess.Popen(quick_command(figure, out), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        errors = []
        for line in proc.stderr:
            line = line.rstrip()
            if line.startswith("error:"):
                errors.append(line.removeprefix("error:").strip())
            elif line.startswith("["):
                log(line)
        printed, code = proc.stdout.read(), proc.wait()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
    if code != 0:
        raise InputError(errors[-1] if errors else f"the run stopped with exit code {code}")
    return json.loads(printed)


def progress_of(line: str) -> tuple[int, int] | None:
    """(done, total) from a progress line of run_figure such as "[fig1] 12/105 d=5 ...", else None."""
    match = _PROGRESS.match(line)
    if match is None:
        return None
    done, total = int(match.group(1)), int(match.group(2))
    return (done, total) if 0 <= done <= total and total > 0 else None


# ---------------------------------------------------------------- reading and checking a CSV


def load_rows(content: bytes, name: str, figure: str) -> list[dict]:
    """The checked rows of one figure's CSV. Every problem raises InputError with a message that names the file
    and never quotes its content."""
    if len(content) > MAX_BYTES:
        raise InputError(f"{name} is larger than {MAX_BYTES // 1_000_000} MB; an experiment CSV is far smaller")
    rows = read_rows(content, name=name)
    found = rows[0]["figure"]  # read_rows checked it is one of FIGURES, so naming it quotes nothing
    if found != figure:
        raise InputError(f"{name} holds the results of {tab_label(found)} ({found}), not of {tab_label(figure)}; "
                         f"load it in the {tab_label(found)} panel")
    check_shape(rows, name)
    return rows


def check_shape(rows: list[dict], name: str) -> None:
    """At most a few thousand rows and a small grid of subplots: a plot a reader can use and a browser can draw."""
    counts = {key: len({r[key] for r in rows}) for key in ("panel", "metric", "method")}
    limits = {"panel": MAX_PANELS, "metric": MAX_METRICS, "method": MAX_METHODS}
    too_many = [f"{counts[k]} {k}s (at most {limits[k]})" for k in limits if counts[k] > limits[k]]
    if len(rows) > MAX_ROWS:
        too_many.insert(0, f"{len(rows)} rows (at most {MAX_ROWS})")
    if too_many:
        raise InputError(f"{name} is not one figure's results: it has {', '.join(too_many)}")


def read_file(path: Path, figure: str, name: str) -> list[dict] | None:
    """A figure's CSV on disk, checked and called `name` in messages; None when there is none."""
    if not path.is_file():
        return None
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{name} cannot be read ({exc.strerror})") from None
    return load_rows(content, name, figure)


# ---------------------------------------------------------------- a run's repetitions


def repetitions(rows: list[dict]) -> int:
    """The repetitions behind the rows (the same for every row of a run)."""
    return max(int(r["reps"]) for r in rows)


def quick_label(rows: list[dict]) -> str:
    r = repetitions(rows)
    return f"quick preset: {r} repetition{'s' if r != 1 else ''}, reduced grid (see docs/experiments.md)"
