"""Downloads that hand a colleague the code of a run: a Python script and a Jupyter notebook (core.reproduce).

A teaching run's code replays it exactly when it was seeded; a published release's code reruns its
settings with fresh noise, and says in its header that running it on real data is a new release outside
the ledger. The buttons use on_click="ignore": a rerun of the page would draw fresh noise.
"""

from __future__ import annotations

import streamlit as st

from core.errors import PspError
from core.plan import ReleasePlan
from core.reproduce import download_name, exact, notebook, script
from ui.labels import message

SCRIPT_HELP = ("Code that runs these settings again through this project's `core` package and prints the "
               "released value, the interval and the test (14). ")
SEEDED = "With the noise seed set it prints exactly this run's numbers: NOT private, like the run itself."
UNSEEDED = ("Without a noise seed it draws fresh noise, so it prints another value; on real data that is a new "
            "release, charged to no ledger.")


def reproduce_downloads(plan: ReleasePlan) -> None:
    """Two download buttons, the script and the notebook of the teaching run the plan drew."""
    try:
        code, book = script(plan), notebook(plan)
    except PspError as exc:  # e.g. an uploaded file's name that cannot be saved beside the code
        st.warning(message(exc), icon=":material/code_off:")
        return
    tip = SCRIPT_HELP + (SEEDED if exact(plan) else UNSEEDED)
    # Only a seeded run can be replayed; without a seed the code reruns these settings with new noise.
    what = "Reproduce" if exact(plan) else "These settings, new noise"
    with st.container(horizontal=True):
        st.download_button(f"{what}: Python script", code, download_name(plan, ".py"), "text/x-python",
                           key="reproduce_script", on_click="ignore", icon=":material/code:", help=tip)
        st.download_button(f"{what}: Jupyter notebook", book, download_name(plan, ".ipynb"),
                           "application/x-ipynb+json", key="reproduce_notebook", on_click="ignore",
                           icon=":material/description:", help=tip + " The same code in cells, each stage explained.")


def rerun_download(plan: ReleasePlan) -> None:
    """The Report's button: the published release's plan as a script; it has no seed (a charged plan never has)."""
    try:
        code = script(plan)
    except PspError as exc:
        st.warning(message(exc), icon=":material/code_off:")
        return
    st.download_button("Script of these settings", code, download_name(plan, ".py"), "text/x-python",
                       key="report_script", on_click="ignore", icon=":material/code:",
                       help=SCRIPT_HELP + "It has no seed: the released value's noise came from the operating system "
                       "and cannot be drawn again. Running it on real data is a NEW release that spends (ε, δ) "
                       "outside the privacy ledger.")
