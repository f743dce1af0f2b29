"""A reader's link on a publish-only server changes nothing, a key in a link is never echoed, and a reader sees
publications only.

Every link below is one a stranger can send: it names settings (ui.params), and the server must neither write nor
fetch a file for a reader, nor quote a secret or a server path back, nor show charges that published nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.data.spec import SyntheticSpec
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec
from core.plan import ReleasePlan, charge_and_certify
from core.privacy.access import CURATOR
from core.privacy.accounting import make_budget
from core.privacy.ledger_store import open_ledger
from ui.loaded import WRITES_REFUSED
from ui.params import looks_like_key, shown

KEY = "psp-0123abcd-" + "Zq8_x3Lk-9PaW2mRt7VbN4cYe1HdFs6J"  # the shape of core.privacy.access.new_key's keys


@pytest.fixture
def reader(monkeypatch):
    """A browser on another machine (conftest's on_this_machine says otherwise)."""
    monkeypatch.setattr("ui.access._on_this_machine", lambda: False)


@pytest.fixture
def folders(tmp_path, monkeypatch, reader) -> list[Path]:
    """A publish-only server whose cache, data and census folders are this test's own, empty."""
    made = [tmp_path / name for name in ("cache", "data", "census")]
    for folder in made:
        folder.mkdir()
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(made[0]))
    monkeypatch.setenv("XDG_DATA_HOME", str(made[1]))
    return made


def files(folders: list[Path]) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*"))


def dump(at: AppTest) -> str:
    """Every element's full description (text, labels, help, placeholders), sidebar included."""
    def walk(node):
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return "\n".join(str(getattr(node, "proto", "")) for node in walk(at._tree))


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "exception")
                     for e in at.get(kind))


def open_data(query: dict[str, str]) -> AppTest:
    at = new_app(90, query=query)
    at.run()
    return at.switch_page("pages/data.py").run()


@pytest.mark.parametrize("query", [
    {"source": "acs", "census_sample": "1234", "states": "WY,VT"},
    {"source": "acs", "acs_root": "<census>/x", "download": "1", "states": "WY"},
], ids=["census_sample", "download"])
def test_a_readers_link_writes_and_fetches_nothing_and_names_no_server_path(folders, query, monkeypatch):
    fetched = []  # a census site that always answers: only the rule stands between the link and a download
    monkeypatch.setattr("core.data.acs._unreachable", lambda url: None)
    monkeypatch.setattr("core.data.acs._download", lambda *args: fetched.append(args))
    query = {k: v.replace("<census>", str(folders[2])) for k, v in query.items()}
    before = files(folders)
    at = open_data(query)
    assert not at.exception, [e.value for e in at.exception]
    assert files(folders) == before and not fetched
    assert WRITES_REFUSED in texts(at)
    assert at.button(key="make_census_sample").disabled if "census_sample" in query else at.checkbox(
        key="download").disabled
    page = dump(at)
    for folder in (*folders, Path.home()):
        assert str(folder) not in page
    assert "private-single-parameter" not in page and "acs_root" not in at.query_params


def test_an_analyst_may_make_a_synthetic_sample_on_a_publish_only_server(folders):
    open_ledger().add_analyst("ana", (10.0, 1e-5))
    at = new_app(90, query={"source": "acs", "census_sample": "1000", "states": "WY"}, analyst="ana")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(p.name == "psam_p56.csv" for p in files(folders))
    assert WRITES_REFUSED not in texts(at)


def test_a_key_in_a_link_is_dropped_and_never_shown():
    at = new_app(90, query={"coordinates": KEY, KEY: "1", "states": "CA"})
    at.run()
    assert not at.exception
    assert at.session_state["coordinates"] == []
    assert not any(KEY in k or KEY in v for k, v in at.query_params.items())
    assert KEY not in dump(at) and KEY[:12] not in dump(at)
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert "coordinates (what looks like an access key: dropped and not shown" in notice


def test_the_key_rule_and_the_quoting():
    secret = KEY.split("-", 2)[2]
    assert looks_like_key(KEY) and looks_like_key(secret) and looks_like_key("x,PSP-DEADBEEF-abc")
    assert not any(looks_like_key(v) for v in ("0" * 32, "A" * 32, "AGEP,SCHL,MAR", "0123456789abcdef" * 2, "x1,x2"))
    assert shown("a" * 20) == "a" * 20 and shown("a" * 30) == "a" * 20 + "…"


ROBUST = SyntheticSpec("robust", 2_000, 5, 1.0, 1.0, 0)  # the app's default data at n = 2,000


def open_certification() -> None:
    """Certificates bought first on the loaded data's people and kept, waiting for their release: nothing published."""
    book = open_ledger()
    book.set_default_cap((100.0, 1e-4))
    problem = prepare_spec(ROBUST.load(), ModelSpec("robust").resolve(ROBUST.d), ROBUST)
    plan = ReleasePlan(data=ROBUST, model=problem.model, target=1, name="x1", budget=make_budget(8.0, 1e-6))
    charge_and_certify(plan, problem, book, spender=CURATOR)


@pytest.mark.parametrize("who", ["local", "reader"])
def test_an_open_certification_shows_to_whoever_may_spend_only(who, request):
    open_certification()
    if who == "reader":
        request.getfixturevalue("reader")
    at = new_app(90, n=2_000)
    at.run()
    at.switch_page("pages/report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    page = texts(at)
    assert "Nothing has been published on these people yet" in page
    waiting = re.search(r"certificates, waiting for their release \(λ̂min = ", page)
    assert (waiting is not None) == (who == "local")
    assert ("λ̂min" in page) == (who == "local")


def test_a_reader_cannot_start_an_experiment_preset_on_a_publish_only_server(folders, monkeypatch):
    monkeypatch.setenv("PSP_EXPERIMENTS_DIR", str(folders[0] / "experiments"))
    at = new_app(90)
    at.run()
    at.switch_page("pages/experiments.py").run()
    quick = [b for b in at.button if b.key and b.key.startswith("experiments_quick_")]
    assert quick and all(b.disabled for b in quick)
    assert all(b.help == WRITES_REFUSED for b in quick)
