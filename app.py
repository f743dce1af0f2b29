"""The app's pages and navigation: the script a server runs for each session (`streamlit run serve.py`)."""

import streamlit as st

from ui import access, boot, heap, params, session, sidebar
from ui.format import presentation_style

st.set_page_config(page_title="Private single parameter", layout="wide")
boot.build_kernels()  # in a child process, from a fresh server's first request on
session.init()
access.announce()  # once per server, in its log: who may spend
# Every page has its own path, so a link to any of them (with its settings) can be shared.
PAGES = (  # (file, title, icon, URL path)
    ("pages/home.py", "Start", ":material/home:", ""),
    ("pages/data.py", "Data", ":material/table:", "data"),
    ("pages/pipeline.py", "Pipeline", ":material/account_tree:", "pipeline"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:", "compare"),
    ("pages/attacker.py", "Attacker's view", ":material/visibility:", "attacker"),
    ("pages/planner.py", "Planner", ":material/calculate:", "planner"),
    ("pages/report.py", "Report", ":material/description:", "report"),
    ("pages/experiments.py", "Experiments", ":material/science:", "experiments"),
)
# A publish-only deployment lists only what works there: the pages closed in publish mode keep their address (and
# say why they are closed) but leave the menu.
hidden = set(params.TEACHING_ONLY_PAGES) if params.locked() else set()
page = st.navigation([st.Page(file, title=title, icon=icon, url_path=path, default=not path,
                              visibility="hidden" if path in hidden else "visible")
                      for file, title, icon, path in PAGES])
if page.url_path == "":  # Streamlit shows the default page for a path that names none: say so
    boot.unknown_page_notice({path for *_, path in PAGES})
reading = page.url_path == "report" and params.RELEASE in st.query_params  # a publication's permanent address
sidebar.render(budget=page.url_path != "pipeline", data=not reading)  # the Pipeline writes its own budget
presentation_style()
with boot.unexpected_errors():
    page.run()
params.sync_url()
boot.warm_up()  # after the page: a first request's own run does not share its time with the warm-up
heap.settle()  # after a run that loaded new modules: later collections skip them (ui.heap)
