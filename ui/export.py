"""Downloads that hand a colleague the code of a run: a Python script and a Jupyter notebook (core.reproduce).

A teaching run's code replays it exactly when it was seeded; a published release's code reruns its
settings with fresh noise, and says in its header that running it on real data is a new release outside
the ledger. The buttons use on_click="ignore": a rerun of the page would draw fresh noise.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.errors import PspError
from core.mechanisms.pipeline import Problem
from core.privacy.accounting import Budget
from core.reproduce import Reproduction, Target, download_name, notebook, script
from ui import state
from ui.labels import message

SCRIPT_HELP = ("Code that runs these settings again through this project's `core` package and prints the "
               "released value, the interval and the test (14). ")
SEEDED = "With the noise seed set it prints exactly this run's numbers: NOT private, like the run itself."
UNSEEDED = ("Without a noise seed it draws fresh noise, so it prints another value; on real data that is a new "
            "release, charged to no ledger.")


def target_of(u: int | np.ndarray, names: tuple[str, ...]) -> Target:
    """The coefficient as the code names it: a coordinate index by its feature's name, a direction u as given."""
    if isinstance(u, int | np.integer):
        return names[int(u)]
    return tuple(float(x) for x in np.ravel(u))


def teaching_reproduction(problem: Problem, b: Budget, u: int | np.ndarray, seed: int | None) -> Reproduction:
    """The settings of the Pipeline's teaching run: the problem's specs, the budget b solved from the settings'
    total, split weights (as entered) and accounting, and the settings' calibration, level and fallback."""
    return Reproduction(
        problem.data_spec, problem.model, target_of(u, problem.feature_names), b.epsilon_total, b.delta_total,
        state.split(), b.accounting, state.get("calibration"), state.get("level"), state.fallback(), seed)


def reproduce_downloads(problem: Problem, b: Budget, u: int | np.ndarray, seed: int | None) -> None:
    """Two download buttons, the script and the notebook of the teaching run drawn with (problem, b, u, seed)."""
    try:
        r = teaching_reproduction(problem, b, u, seed)
    except PspError as exc:  # e.g. an uploaded file's name that cannot be saved beside the code
        st.warning(message(exc), icon=":material/code_off:")
        return
    tip = SCRIPT_HELP + (SEEDED if r.exact else UNSEEDED)
    # Only a seeded run can be replayed; without a seed the code reruns these settings with new noise.
    what = "Reproduce" if r.exact else "These settings, new noise"
    with st.container(horizontal=True):
        st.download_button(f"{what}: Python script", script(r), download_name(r, ".py"), "text/x-python",
                           key="reproduce_script", on_click="ignore", icon=":material/code:", help=tip)
        st.download_button(f"{what}: Jupyter notebook", notebook(r), download_name(r, ".ipynb"),
                           "application/x-ipynb+json", key="reproduce_notebook", on_click="ignore",
                           icon=":material/description:", help=tip + " The same code in cells, each stage explained.")


def published_reproduction(release: state.PublishedRelease, names: tuple[str, ...]) -> Reproduction:
    """The settings of a published release, with no seed: its noise came from the OS and cannot be drawn again.

    The record keeps the budget's normalised split (the same stages), the normalised u and the fallback setting
    the release was drawn with.
    """
    b = release.budget
    u = release.run.u
    basis = np.count_nonzero(u) == 1 and float(u.max()) == 1.0  # e_j: named by its feature
    target = names[int(np.argmax(u))] if basis else target_of(u, names)
    return Reproduction(release.data, release.model, target, b.epsilon_total, b.delta_total, b.split, b.accounting,
                        release.calibration, release.level, release.fallback, None)


def rerun_download(release: state.PublishedRelease, names: tuple[str, ...]) -> None:
    """The Report's button: the published release's settings as a script with no seed."""
    try:
        r = published_reproduction(release, names)
    except PspError as exc:
        st.warning(message(exc), icon=":material/code_off:")
        return
    st.download_button("Script of these settings", script(r), download_name(r, ".py"), "text/x-python",
                       key="report_script", on_click="ignore", icon=":material/code:",
                       help=SCRIPT_HELP + "It has no seed: the released value's noise came from the operating system "
                       "and cannot be drawn again. Running it on real data is a NEW release that spends (ε, δ) "
                       "outside the privacy ledger.")
