"""Entry point of the app: `streamlit run app.py`."""

import streamlit as st

from ui import boot, sidebar, state
from ui.format import presentation_style

st.set_page_config(page_title="Private single parameter", layout="wide")
state.init()
# Every page has its own path, so a link to any of them (with its settings) can be shared.
pages = [
    st.Page("pages/home.py", title="Start", icon=":material/home:", url_path="", default=True),
    st.Page("pages/data.py", title="Data", icon=":material/table:", url_path="data"),
    st.Page("pages/pipeline.py", title="Pipeline", icon=":material/account_tree:", url_path="pipeline"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("pages/planner.py", title="Planner", icon=":material/calculate:", url_path="planner"),
    st.Page("pages/report.py", title="Report", icon=":material/description:", url_path="report"),
    st.Page("pages/experiments.py", title="Experiments", icon=":material/science:", url_path="experiments"),
]
page = st.navigation(pages)
if page.url_path == "":  # Streamlit shows the default page for a path that names none: say so
    boot.unknown_page_notice({p.url_path for p in pages})
sidebar.render(budget=page.url_path != "pipeline")  # the Pipeline writes its own, from a fragment
presentation_style()
page.run()
state.sync_url()
