"""Who may spend, in the app: a stranger with the link reads and spends nothing, whatever they press or put in the
link; an analyst signs in with their key and spends within their share; a revocation ends an open session at once;
the key is never kept in the session, the ledger file or the log."""

from __future__ import annotations

import logging

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.data.spec import SyntheticSpec
from core.privacy.charge import default_cap, open_charged
from core.privacy.ledger_store import default_ledger_path, open_ledger

N = 20_000
PEOPLE = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()
SPENDING = ("release", "certify", "release_table")


@pytest.fixture
def stranger(monkeypatch):
    """A browser on another machine (not the server's own)."""
    monkeypatch.setattr("ui.access._on_this_machine", lambda: False)


@pytest.fixture
def locked(monkeypatch):
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")


def start(query: dict | None = None, **settings: object) -> AppTest:
    """The Start page, run (AppTest shows a page's whole sidebar there; the Pipeline's ends in its fragment's)."""
    at = new_app(60, query=query)
    at.session_state["n"] = N
    for key, value in settings.items():
        at.session_state[key] = value
    return at.run()


def to_pipeline(at: AppTest) -> AppTest:
    return at.switch_page("pages/pipeline.py").run()


def pipeline(query: dict | None = None, **settings: object) -> AppTest:
    return to_pipeline(start(query, **settings))


def may_spend(at: AppTest) -> bool:
    """Whether any spending button is there and on."""
    return any(b.key in SPENDING and not b.disabled for b in at.button)


def sidebar_text(at: AppTest) -> str:
    return " ".join(e.value for kind in ("markdown", "caption", "warning") for e in getattr(at.sidebar, kind))


def sign_in(at: AppTest, key: str) -> AppTest:
    at.sidebar.text_input(key="access_key").input(key)
    (submit,) = [b for b in at.sidebar.button if b.proto.is_form_submitter]
    return submit.click().run()


def charges() -> list[tuple[str, float]]:
    return [(e.spender, e.epsilon) for e in open_ledger().entries(PEOPLE)]


@pytest.mark.parametrize("query", [{}, {"mode": "teaching", "noise_seed": "3"}, {"analyst": "ana"},
                                   {"access_key": "psp-00000000-x", "mode": "publish"}])
def test_a_stranger_on_a_publish_only_server_without_analysts_spends_nothing(stranger, locked, query):
    at = start(query=query, epsilon=4.0)
    assert "only the curator's command line publishes" in sidebar_text(at)
    to_pipeline(at)
    assert not at.exception, [e.value for e in at.exception]
    assert not may_spend(at)
    assert any("nobody may spend this budget from this app" in i.value for i in at.info)
    assert charges() == []


def test_the_servers_own_browser_spends_only_outside_publish_only_and_without_analysts(monkeypatch):
    at = start(mode="publish", epsilon=4.0)  # conftest: this browser is on the server's machine
    assert "only a browser on the server's own machine" in sidebar_text(at)
    assert may_spend(to_pipeline(at))
    at.button(key="release").click().run()
    assert charges() == [("this machine's browser", 4.0)]
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    assert not may_spend(pipeline(epsilon=4.0))
    monkeypatch.delenv("PSP_PUBLISH_ONLY")
    open_charged(None, default_cap()).add_analyst("ana", (5.0, 1e-5))
    assert not may_spend(pipeline(mode="publish", epsilon=4.0))  # with analysts, only they spend


def test_an_analyst_signs_in_spends_their_share_and_no_further(stranger, locked, caplog):
    book = open_charged(None, default_cap())
    key = book.add_analyst("ana", (6.0, 1e-5))
    at = pipeline(epsilon=4.0)
    assert not may_spend(at) and any("Sign in with the key" in i.value for i in at.info)
    at = start(epsilon=4.0)
    with caplog.at_level(logging.WARNING, logger="psp.access"):
        sign_in(at, key[:-1] + ("x" if key[-1] != "x" else "y"))
    assert not at.exception and "That access key is not valid" in sidebar_text(at)
    assert not may_spend(to_pipeline(at))
    at = sign_in(start(epsilon=4.0), key)
    assert not at.exception and "ana" in sidebar_text(at)
    assert "a reload or a new tab asks for your key again" in sidebar_text(at)  # why a reload signs out, said plainly
    assert may_spend(to_pipeline(at))
    at.button(key="release").click().run()
    assert charges() == [("ana", 4.0)]
    assert at.button(key="release").disabled  # 4 + 4 > 6: past the share, off before any click
    (notice,) = [w.value for w in at.warning if w.value.startswith("Release is off")]
    assert "your share of the cap" in notice and "ε = 2" in notice
    # the key is nowhere: not in the session, the ledger file or the log
    assert key not in repr({k: at.session_state[k] for k in at.session_state})
    assert key.split("-", 2)[2] not in caplog.text
    ledger_bytes = b"".join(p.read_bytes() for p in default_ledger_path().parent.glob("ledger.sqlite3*"))
    assert key.split("-", 2)[2].encode() not in ledger_bytes


def test_a_revocation_ends_an_open_session_at_once(stranger, locked):
    book = open_charged(None, default_cap())
    key = book.add_analyst("ana", (10.0, 1e-5))
    at = to_pipeline(sign_in(start(epsilon=2.0), key))
    assert may_spend(at)
    open_ledger().revoke_analyst("ana")  # the curator, from another process's handle
    at.button(key="release").click().run()  # the page drawn before the revocation: its click
    assert not at.exception
    assert charges() == [] and not may_spend(at) and "analyst" not in at.session_state
    assert any("You are reading" in i.value for i in at.info)  # in place of the controls, one sentence
    at = start(epsilon=2.0)  # a new page: the only analyst is gone, and so is the sign-in
    assert "analyst" not in at.session_state and "only the curator's command line publishes" in sidebar_text(at)


def test_a_stranger_reads_what_an_analyst_published_and_spends_nothing(stranger, locked):
    key = open_charged(None, default_cap()).add_analyst("ana", (10.0, 1e-5))
    at = to_pipeline(sign_in(start(epsilon=4.0), key))
    at.button(key="release").click().run()
    (entry,) = open_ledger().entries(PEOPLE)
    reader = start(epsilon=4.0)  # another browser with the same link: no key
    reader.switch_page("pages/report.py").run()
    assert not reader.exception
    shown = " ".join(m.value for m in reader.markdown) + " ".join(i.value for i in reader.info)
    assert "Read back from the privacy ledger" in shown and "by ana" in shown  # the Report's log names who spent
    assert entry.details.outcome in ("released", "bottom", "fallback")
    assert not may_spend(to_pipeline(start(epsilon=4.0))) and len(open_ledger().entries(PEOPLE)) == 1
