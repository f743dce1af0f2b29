"""Streamlit helpers shared by the pages: settings, cached data and fit, the sidebar, the look."""
