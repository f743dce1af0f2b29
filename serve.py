"""The app's server, `streamlit run serve.py`: app.py's pages, served once every module they need is loaded and the
compiled kernels' build has begun (ui.boot.lifespan), so that the first link a class opens is drawn about as fast as
a later one. `streamlit run app.py` serves the same app and loads them on its first request instead."""

import streamlit as st

from ui.boot import lifespan

app = st.App("app.py", lifespan=lifespan)
