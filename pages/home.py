"""Start page: what the app does, the four stages as a picture, the two modes, and three ways in.

A starting point sets its settings in a button's callback (before any widget of the run exists, so the
sidebar's widgets take them) and then switches page; ui.params.sync_url writes them into the new URL.
"""

from __future__ import annotations

import streamlit as st

from ui import params, session
from ui.boot import through_navigation
from ui.format import presenting

through_navigation()  # a deep link's first run on a fresh server goes through app.py

STAGES = """
digraph {
  rankdir=DIRECTION; bgcolor="transparent";
  node [shape=box, style="rounded,filled", fillcolor="#F2F5F8", color="#0072B2", fontname="sans-serif",
        fontsize=FONT];
  edge [color=QUIET, fontcolor=QUIET, fontsize=FONT];
  fit [label="1. Fit θ(Pₙ)\\nthe exact model\\n(not private)"];
  bounds [label="2. Private bounds\\nλ̂min, λ̂max\\non the curvature"];
  test [label="3. Stability test (14)\\nis one coefficient\\nsafe to release?"];
  release [label="4. Release\\nthe coefficient + noise,\\nwith an interval"];
  bottom [label="⊥ nothing released", shape=plaintext, style="", fontcolor=QUIET];
  fit -> bounds -> test;
  test -> release [label="passes"];
  test -> bottom [label="fails", style=dashed];
}
"""
QUIET = ("#666666", "#A0A0A0")  # the edges' grey on the light and the dark page: 5.7:1 and 7.2:1 (WCAG AA 4.5:1)
STAGES_IN_WORDS = (
    "The four stages: fit the model θ(Pₙ) exactly; bound its curvature privately (λ̂min, λ̂max); run the "
    "stability test (14), which asks whether the fit is stable enough; if it is, release the coefficient with "
    "calibrated noise and an interval for it, otherwise release nothing (⊥)."
)

# The settings of each starting point, keys of ui.params.PARAMS.
DEMO = {"source": "synthetic_robust", "mode": "teaching"}
# A sample too small for (14) at this ε: Stage 3's What-if then says which n or ε would pass.
WHAT_IF = {"source": "synthetic_robust", "mode": "teaching", "n": 20_000, "epsilon": 1.0}
PUBLISH = {"source": "upload", "mode": "publish"}


def apply(settings: dict) -> None:
    """Set registered settings only: an unknown key or a value outside its choices is a programming error."""
    for key, value in settings.items():
        choices = params.PARAMS[key].choices
        assert choices is None or value in choices, (key, value)
        st.session_state[key] = value


def start(label: str, settings: dict, page: str, key: str, what: str) -> None:
    if st.button(label, key=key, on_click=apply, args=(settings,), type="primary", width="stretch"):
        st.switch_page(page)
    st.caption(what)


def starting_points() -> None:
    st.subheader("Start here")
    teaching, what_if, publish = st.columns(3)
    if params.locked():
        teaching.info("Teaching demos are not available: this deployment is locked to publish mode.",
                      icon=":material/lock:")
    else:
        with teaching:
            start("Teaching demo on synthetic data", DEMO, "pages/pipeline.py", "start_demo",
                  "The Pipeline page on made-up data: every stage, non-private numbers marked, nothing spent")
        with what_if:
            start("What if n or ε were larger?", WHAT_IF, "pages/pipeline.py", "start_what_if",
                  "A sample of 20,000 at ε = 1, where the test (14) fails; Stage 3's What-if shows the n or ε "
                  "at which it would pass")
    with publish:
        start("Publish on your data", PUBLISH, "pages/data.py", "start_publish",
              "The Data page, to upload a CSV; then Release on the Pipeline page spends your budget")


def main() -> None:
    session.ensure()
    st.title("Start")
    st.markdown(
        "This app releases **one coefficient** of a regression model — say, how much income depends on one "
        "feature — with **differential privacy**: the number published reveals almost nothing about any one "
        "person in the data. It first checks, privately, that the fit is stable enough to release "
        "(a **certificate**); if so, it releases the coefficient with noise and an **interval** for it; if not, "
        "it releases nothing. The method is that of Asi, Duchi & Talwar (2025), *On privately estimating a "
        "single parameter*."
    )
    # On a projector: larger type, the stages top to bottom so that the picture is not shrunk back to the page's width.
    big = presenting()
    quiet = QUIET[st.context.theme.type == "dark"]
    st.graphviz_chart(STAGES.replace("FONT", "16" if big else "14").replace("DIRECTION", "TB" if big else "LR")
                      .replace("QUIET", f'"{quiet}"'))
    st.caption(STAGES_IN_WORDS)
    st.markdown(
        "**Two modes.** *Teaching* is for exploring: every intermediate is shown, non-private numbers are "
        "marked as such, and nothing is charged. *Publish* is for a data curator's real releases: each one "
        "spends privacy budget from a ledger with a cap, and the Pipeline and the Report show only what the "
        "mechanism releases (the Data page still shows the rows to whoever holds them). Before spending any, "
        "the *Planner* says from public assumptions alone whether a release would pass and how wide its "
        "interval would be; it reads no data. The sidebar's *Presentation* switch shows fewer digits in a larger "
        "type for an audience."
    )
    st.page_link("pages/planner.py", label="Plan a release without touching the data", icon=":material/calculate:")
    starting_points()


main()
