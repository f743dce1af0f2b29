"""The sidebar every page shows: the loaded data set, the privacy budget and the mode."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.errors import PspError
from ui import access, keys, loaded, params, release
from ui.controls import budget_warnings
from ui.labels import message


def render(budget: bool = True, data: bool = True) -> None:
    """Every page's sidebar; budget=False leaves the budget to the page (the Pipeline writes it from its fragment,
    so that an ε change updates it without rerunning the whole page); data=False leaves out the loaded data, its
    ledger and the budget (a publication's permanent address: its document names its own data, and a reader need not
    wait for other data to load)."""
    sb = st.sidebar
    ignored = keys.IGNORED.pop()
    if ignored:
        sb.warning("The link's " + ", ".join(ignored) + " could not be used; the default is shown instead.",
                   icon=":material/link_off:")
    if params.locked():
        sb.markdown("**Mode** · Publish, locked by this deployment: only what the mechanism releases is shown")
    else:
        sb.radio(
            "Mode", tuple(params.MODES), key="mode", format_func=params.MODES.get, horizontal=True,
            help="Teaching shows every intermediate, non-private ones badged, and allows a noise seed. "
            "Publish shows only what the mechanism releases, draws noise from the OS and keeps a budget ledger; "
            "only its releases, charged to that ledger, reach the Report.",
        )
    sb.toggle("Presentation", key="present",
              help="Numbers to 3 significant digits in a larger type, the formulas and step-by-step details "
              "hidden: for showing results to others. Kept in the link; it never changes a draw.")
    if not data:
        sb.caption("Reading a publication: its data, its guarantee and its ledger are in the document.")
        return
    sb.markdown(f"**Data** · {params.source_name()}")
    n = None
    try:
        data = loaded.dataset()
        n = data.n  # public, as everywhere here
        sb.caption(f"n = {data.n:,}, d = {data.d} · {loaded.data_spec().describe()}")
    except PspError as exc:
        sb.caption(f"Not loaded: {message(exc)}")
    if params.is_publish():
        ledger_summary(sb)
        access.sign_in_box(sb)
    if budget:
        budget_line(sb)
        budget_warnings(sb, n)


def budget_line(sb: DeltaGenerator) -> None:
    """The total budget in one line (the Pipeline shows its warnings beside its budget controls)."""
    sb.markdown(f"**Budget** · ε = {params.get('epsilon'):g}, δ = {params.get('delta'):g} "
                f"({params.get('accounting')} accounting)")


def ledger_summary(sb: DeltaGenerator) -> None:
    """What was spent on the people of the loaded data, their cap and what remains: read only, the caps are the
    data curator's (python -m core ledger set-cap)."""
    try:
        (spent_e, spent_d), (cap_e, cap_d), (left_e, left_d) = release.spent(), release.caps(), release.remaining()
    except PspError as exc:  # no data, or an unusable ledger file: releases are refused
        sb.markdown(f"**Ledger** · {message(exc)}")
        return
    sb.markdown(f"**Ledger** · spent ε = {spent_e:g}, δ = {spent_d:g} on these people")
    sb.caption(f"Cap ε = {cap_e:g}, δ = {cap_d:g} (set by the data curator) · remaining ε = "
               f"{left_e:g}, δ = {left_d:g}")
