"""Experiments page: for each figure of the paper, what it claims, what our runs found, and the runs themselves.

Simulations only: core.teaching.experiments draws its own synthetic data sets (the census figures use SYNTHETIC files
that core writes), so nothing here reads the loaded data, spends budget or touches the ledger, and the page is the same
in teaching and publish mode. Results come from files, never from the session: a recorded full run
(docs/results/<fig>.csv), the last quick run in the app's experiments directory, or an upload. run_figure caches
every task on disk, so a repeated quick run, or a reload, computes nothing. The quick preset runs as the command
line in its own process (ui.experiment_runs.run_quick).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from core.errors import PspError
from core.teaching.experiments import FIGURES
from ui import experiment_figures as plots
from ui import experiment_runs as runs
from ui import loaded
from ui.boot import through_navigation
from ui.charts import chart
from ui.experiment_claims import CLAIMS, tab_label
from ui.format import data_table, fixed, md
from ui.labels import capitalised

through_navigation()  # a deep link's first run on a fresh server goes through app.py

UPLOAD_LABEL = "Load a CSV made by the command line"
QUICK_LABEL = "Run the quick preset"


# ---------------------------------------------------------------- the paper and our conclusions


def quote(text: str) -> str:
    """A verbatim passage as a block quote (its $…$ are the paper's own formulas)."""
    return f"> “{text}”"


def claim(figure: str) -> None:
    st.markdown("#### What the paper claims")
    c = CLAIMS.get(figure)
    if c is None:
        st.caption(f"No quotation of the paper is recorded for {figure} yet.")
        return
    if c.caption is None:
        st.caption(f"This copy of the paper carries no caption text for Figure {c.number}; its section 4 says:")
    else:
        st.markdown(f"**Figure {c.number}**, the caption:")
        st.markdown(quote(c.caption))
        st.markdown(f"Section 4 on Figure {c.number}:")
    for passage in c.passages:
        st.markdown(quote(passage))


def conclusion(figure: str) -> None:
    st.markdown("#### What our runs found")
    c = CLAIMS.get(figure)
    if c is None:
        st.caption("No conclusion recorded yet; see docs/experiments.md.")
        return
    st.markdown("\n".join(f"- **{f.verdict}.** {md(f.text)}" for f in c.findings))


# ---------------------------------------------------------------- results


def show(figure: str, rows: list[dict], label: str, key: str) -> None:
    """core's plot of the rows and, under it, their numbers."""
    st.caption(f"{capitalised(label)} · bars are ±2 standard errors; a method that returned ⊥ counts in the release "
               "rate and is left out of the error means (a gap where it never released)")
    title = f"{tab_label(figure)}: {label}"
    chart(plots.figure(rows, title), f"experiments_chart_{key}_{figure}", restyle=False)
    table = plots.table(rows)
    data_table(table, hide_index=True, key=f"experiments_table_{key}_{figure}", column_config=number_formats(table))


def number_formats(table: pd.DataFrame) -> dict:
    return {c: st.column_config.NumberColumn(format="%.4g") for c in ("x", "mean", "se", "release_rate")}


def full_run(figure: str) -> None:
    st.markdown("#### The full run")
    name = f"the recorded full run ({figure}.csv)"
    try:
        rows = runs.read_file(runs.results_dir() / f"{figure}.csv", figure, name)
    except PspError as exc:
        st.error(f"The full run cannot be shown: {exc}")
        return
    if rows is None:
        st.caption(f"No full run recorded for this figure. To make one: `python -m core experiment {figure} "
                   f"--jobs 2 --out DIR` (25 repetitions, the paper's grid), then copy DIR/{figure}.csv to "
                   "docs/results/.")
        return
    show(figure, rows, f"full run: {runs.repetitions(rows)} repetitions", "full")


def run_quick(figure: str, out: Path) -> None:
    """Run (or resume from the task cache) the quick preset, with its progress; a failure is a message."""
    problem = None
    with st.status(f"Running the quick preset of {tab_label(figure)}…", expanded=True) as status:
        bar = st.progress(0.0, text="Starting the worker processes…")
        last = st.empty()

        def log(line: str) -> None:
            done = runs.progress_of(line)
            if done is not None:
                bar.progress(done[0] / done[1], text=f"{done[0]} of {done[1]} tasks")
            last.caption(md(line))  # run_figure's lines name a task and its time, never data

        try:
            result = runs.run_quick(figure, out, log)
        except PspError as exc:
            problem = str(exc)
        except OSError as exc:
            problem = f"the run could not start or write its files ({exc.strerror}); set PSP_EXPERIMENTS_DIR"
        if problem is None:
            status.update(label=f"Quick preset done: {result['tasks']} tasks in {fixed(result['seconds'], 1)} s",
                          state="complete", expanded=False)
        else:
            status.update(label="The quick preset did not finish", state="error", expanded=False)
    if problem is not None:
        st.error(f"{QUICK_LABEL} ({tab_label(figure)}): {problem}")


def quick(figure: str) -> None:
    st.markdown("#### The quick preset")
    out = runs.quick_dir(figure)
    refused = loaded.write_refusal()  # a run writes its tasks on the server's disk: not a reader's to start
    if st.button(QUICK_LABEL, key=f"experiments_quick_{figure}", disabled=refused is not None,
                 help=refused or "Fewer repetitions on a reduced grid (docs/experiments.md, --quick), on two "
                 "processes. Every task is cached on the server's disk, so running it again computes nothing."):
        run_quick(figure, out)
    try:
        rows = runs.read_file(out / f"{figure}.csv", figure, "your last quick run")
    except PspError as exc:
        st.error(f"Your last quick run cannot be shown: {exc}")
        return
    if rows is None:
        st.caption(f"Not run on this server yet. The same from the command line: `python -m core experiment "
                   f"{figure} --quick --jobs 2 --out DIR`.")
        return
    show(figure, rows, f"your last quick run, {runs.quick_label(rows)}", "quick")


def upload(figure: str) -> None:
    st.markdown("#### A run of your own")
    file = st.file_uploader(
        UPLOAD_LABEL, type="csv", key=f"experiments_upload_{figure}", max_upload_size=runs.MAX_BYTES // 1_000_000,
        help=f"DIR/{figure}.csv written by `python -m core experiment {figure} --out DIR`; it stays in this page.",
    )
    if file is None:
        return
    try:
        rows = runs.load_rows(file.getvalue(), "the uploaded file", figure)
    except PspError as exc:
        st.error(f"{UPLOAD_LABEL} ({tab_label(figure)}): {exc}")
        return
    show(figure, rows, f"uploaded: {runs.repetitions(rows)} repetitions", "upload")


# ---------------------------------------------------------------- page


def panel(figure: str) -> None:
    claim(figure)
    conclusion(figure)
    full_run(figure)
    quick(figure)
    upload(figure)


def main() -> None:
    st.title("Experiments")
    st.info("Simulations only: nothing here touches your data or your privacy budget.", icon=":material/science:")
    st.caption("One panel per figure of the paper's section 4: its claim, quoted; what our runs found; the recorded "
               "full run; a quick preset to run here; and a CSV of your own. The oracle is not private: a yardstick.")
    # Lazy tabs: only the chosen figure's panel runs (its charts, tables and files), so the first screen draws one
    tabs = st.tabs([tab_label(f) for f in FIGURES], key="experiments_figure", on_change="rerun")
    for figure, tab in zip(FIGURES, tabs, strict=True):
        if tab.open:
            with tab:
                panel(figure)


main()
