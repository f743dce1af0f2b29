"""Entry point of the app: `streamlit run app.py`."""

import streamlit as st

from ui import sidebar, state

st.set_page_config(page_title="Private single parameter", layout="wide")
state.init()
pages = [
    st.Page("pages/data.py", title="Data", icon=":material/table:"),
    st.Page("pages/pipeline.py", title="Pipeline", icon=":material/account_tree:", default=True),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
    st.Page("pages/report.py", title="Report", icon=":material/description:"),
    st.Page("pages/experiments.py", title="Experiments", icon=":material/science:"),
]
page = st.navigation(pages)
sidebar.render()
page.run()
state.sync_url()
