# The app on one port: docker build -t private-single-parameter . (README, "Deployment").
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Dependencies first, so a change to the code does not reinstall them.
COPY requirements.txt .
RUN python -m pip install -r requirements.txt

COPY . .

# A user of its own, owning only the two volumes: the code stays read only to the server.
RUN useradd --create-home --uid 10001 psp \
    && mkdir -p /var/lib/psp /var/cache/psp \
    && chown psp:psp /var/lib/psp /var/cache/psp
# The durable privacy ledger (core.privacy.ledger_store.default_ledger_path reads PSP_LEDGER): keep it on a volume, or
# every restart forgets what was spent. The cache volume holds numba's compiled kernels (the code's own
# __pycache__ is not writable here), the census files (XDG_CACHE_HOME, the "ACS census" source's default folder)
# and the Experiments page's quick runs.
ENV PSP_LEDGER=/var/lib/psp/ledger.sqlite3 \
    NUMBA_CACHE_DIR=/var/cache/psp/numba \
    XDG_CACHE_HOME=/var/cache/psp \
    PSP_EXPERIMENTS_DIR=/var/cache/psp/experiments
VOLUME ["/var/lib/psp", "/var/cache/psp"]
USER psp

EXPOSE 8501
# curl is not in the slim image: Python asks the server's health endpoint.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=5)"]
CMD ["streamlit", "run", "serve.py", "--server.port=8501", "--server.address=0.0.0.0"]
