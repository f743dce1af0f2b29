"""A deployment locked to publish mode: no route shows a non-private value or changes the caps.

The lock and the caps come from the environment of the server (or its secrets), never from a widget,
the session or a link; every attempt below is something a user of the app can do.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.privacy.charge import default_cap, open_charged
from core.privacy.ledger_store import open_ledger
from ui.keys import UPLOADED
from ui.loaded import Upload

N = 20_000


@pytest.fixture
def locked(monkeypatch):
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    monkeypatch.setenv("PSP_CAP_EPSILON", "5")
    monkeypatch.setenv("PSP_CAP_DELTA", "1e-5")


def app(query: dict | None = None, page: str | None = "pages/pipeline.py", **settings: object) -> AppTest:
    at = new_app(60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.session_state["n"] = N
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()  # the Start page through app.py (its sidebar included), which registers the pages
    return at if page is None else at.switch_page(page).run()


def text(at: AppTest) -> str:
    parts = [e.value for kind in ("title", "markdown", "caption", "info", "success", "warning", "error")
             for e in getattr(at, kind)]
    return "\n".join(parts + [f"{m.label} {m.value}" for m in at.metric])


def test_links_and_the_session_cannot_unlock_teaching_or_raise_the_cap(locked):
    at = app({"mode": "teaching", "cap_epsilon": "1000", "noise_seed": "3"}, page=None, mode="teaching",
             cap_epsilon=1e3)
    assert not at.exception
    assert at.session_state["mode"] == "publish"
    assert open_ledger().default_cap == (5.0, 1e-5)  # the deployment's, in the curator's file
    assert at.session_state["noise_seed"] is None
    assert not at.sidebar.radio  # no mode switch
    assert not at.sidebar.number_input  # no cap inputs
    assert "locked by this deployment" in text(at)
    at.switch_page("pages/pipeline.py").run()
    assert not at.exception
    assert "not private" not in text(at)  # the teaching badges never appear


def signed_in(share: tuple[float, float] = (100.0, 1e-3)) -> str:
    """An analyst of this test's ledger, as a sign-in leaves the session: their name (what ui.access keeps)."""
    book = open_charged(None, default_cap())
    book.add_analyst("ana", share)
    return "ana"


def test_the_cap_of_the_deployment_is_enforced(locked):
    at = app(epsilon=4.0, analyst=signed_in())
    at.button(key="release").click().run()
    assert not at.exception and not at.error
    at.session_state["cap_epsilon"] = 100.0  # a session entry is not a cap
    at.run()
    assert at.button(key="release").disabled  # 4 + 4 > 5: off before any click, and it says why
    assert any(w.value.startswith("Release is off:") and "is ε = 1, δ = 9e-06" in w.value for w in at.warning)


def test_the_data_page_shows_no_rows_or_statistics(locked):
    at = app()
    at.switch_page("pages/data.py").run()
    assert not at.exception
    assert not at.dataframe and not at.metric and not at.get("plotly_chart")
    assert "locked to publish mode" in text(at)


def test_the_compare_page_is_unavailable(locked):
    at = app()
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert not at.button and "teaching mode only" in text(at)


def test_an_upload_is_kept_in_its_own_session_only():
    """Two sessions: the second never sees the first one's upload, in the data or in the fit caches."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (500, 2))
    y = X @ np.array([0.5, -0.5]) + rng.laplace(size=500)
    rows = "\n".join(f"{a:.6f},{b:.6f},{c:.6f}" for (a, b), c in zip(X, y, strict=True))
    upload = Upload.of("mine.csv", f"x0,x1,y\n{rows}\n".encode())
    first = app(source="upload", upload=upload, upload_loss="robust", noise_seed=1)
    assert not first.exception
    (spec_and_model,) = [k for k in first.session_state[UPLOADED.key] if k[1] is not None]
    assert spec_and_model[0] == upload.spec
    second = app(source="upload", upload_loss="robust")
    assert not second.exception
    assert UPLOADED.key not in second.session_state
    assert "No file uploaded yet" in text(second)


def test_an_unusable_ledger_file_refuses_every_release(tmp_path, monkeypatch):
    """A corrupt ledger never spends nothing silently: the release is refused with the file's path."""
    bad = tmp_path / "broken.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv("PSP_LEDGER", str(bad))
    at = app(mode="publish", epsilon=4.0)
    at.session_state["mode"] = "publish"
    at.run()
    assert not at.exception
    assert not any(b.key in ("release", "certify") and not b.disabled for b in at.button)
    assert at.error and str(bad) in at.error[0].value
    assert "published" not in at.session_state
    assert "Released value" not in text(at)
