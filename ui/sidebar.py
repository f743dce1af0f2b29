"""The sidebar every page shows: the loaded data set, the privacy budget and the mode."""

from __future__ import annotations

import streamlit as st

from core.errors import InputError
from ui import state


def render() -> None:
    sb = st.sidebar
    if state.locked():
        sb.markdown("**Mode** · Publish, locked by this deployment: only what the mechanism releases is shown")
    else:
        sb.radio(
            "Mode", tuple(state.MODES), key="mode", format_func=state.MODES.get, horizontal=True,
            help="Teaching shows every intermediate, non-private ones badged, and allows a noise seed. "
            "Publish shows only what the mechanism releases, draws noise from the OS and keeps a budget ledger; "
            "only its releases, charged to that ledger, reach the Report.",
        )
    sb.markdown(f"**Data** · {state.SOURCES[state.get('source')]}")
    try:
        data = state.dataset()
        sb.caption(f"n = {data.n:,}, d = {data.d} · {state.data_spec().describe()}")
    except InputError as exc:
        sb.caption(f"not loaded: {exc}")
    eps, delta = state.get("epsilon"), state.get("delta")
    sb.markdown(f"**Budget** · ε = {eps:g}, δ = {delta:g} ({state.get('accounting')} accounting)")
    if state.is_publish():
        try:
            spent_e, spent_d = state.spent()
            sb.markdown(f"**Ledger** · spent ε = {spent_e:g}, δ = {spent_d:g} on these people")
        except InputError:
            sb.markdown("**Ledger** · no data loaded")
        if state.locked():  # the caps belong to whoever deployed the app
            sb.caption(f"Cap · ε = {state.get('cap_epsilon'):g}, δ = {state.get('cap_delta'):g}")
            return
        col_e, col_d = sb.columns(2)
        col_e.number_input("Cap ε", min_value=0.0, step=1.0, format="%g", key="cap_epsilon",
                           help="Largest total ε that releases on these data may spend together")
        col_d.number_input("Cap δ", min_value=0.0, max_value=1.0, step=1e-6, format="%g", key="cap_delta",
                           help="Largest total δ that releases on these data may spend together")
