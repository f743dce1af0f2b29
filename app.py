"""Entry point of the app: `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="Private single parameter", layout="wide")

pipeline = st.Page("pages/pipeline.py", title="Pipeline", icon=":material/account_tree:", default=True)
st.navigation([pipeline]).run()
