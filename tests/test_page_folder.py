"""A curator's folder in the app: offered by the name the deployment gives it (never a location, in a menu, a link or
a page), read in blocks by the Pipeline and publish mode as any data set, read again when its files change, and
refused in one sentence by the pages that hold every row in memory."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import streamlit as st
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.data.synthetic import write_folder
from core.privacy.charge import default_cap, open_charged
from core.privacy.ledger_store import open_ledger
from ui import loaded
from ui.loaded import WRITES_REFUSED
from ui.params import SOURCES

N = 30_000


@pytest.fixture
def folder(tmp_path, monkeypatch):
    root = tmp_path / "secret-location" / "income"
    write_folder(str(root), N, 3, "logistic", theta_norm=2.0, seed=5, file_rows=12_000)
    monkeypatch.setenv("PSP_FOLDERS", f"income={root}; other={tmp_path / 'nowhere'}")
    return root


def app(page: str, query: dict | None = None, **settings: object) -> AppTest:
    at = new_app(120, query)
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()
    return at.switch_page(f"pages/{page}.py").run()


def text(at: AppTest) -> str:
    parts = [e.value for kind in ("title", "markdown", "caption", "info", "success", "warning", "error", "toast")
             for e in getattr(at, kind)]
    return "\n".join(parts + [f"{m.label} {m.value}" for m in at.metric])


def test_the_data_page_offers_the_folder_by_name_and_shows_its_size_not_its_rows(folder):
    at = app("data", {"source": "folder", "folder": "income"})
    assert not at.exception and not at.error
    assert SOURCES["folder"] in at.radio(key="source").options
    assert at.selectbox(key="folder").options == ["income", "other"]
    assert ("n", f"{N:,}") in [(m.label, m.value) for m in at.metric]
    assert "its rows are not previewed" in text(at) and not at.dataframe  # no preview, no statistics table
    assert str(folder.parent) not in text(at)


def notices(query: dict) -> tuple[AppTest, str]:
    """The app opened at a link, and the notices its sidebar gives on that first run."""
    at = new_app(120, query)
    at.run()
    return at, " ".join(w.value for w in at.sidebar.warning)


def test_without_folders_the_source_is_not_offered_and_a_link_to_it_is_replaced(monkeypatch):
    monkeypatch.delenv("PSP_FOLDERS", raising=False)
    at, notice = notices({"source": "folder"})
    assert not at.exception and at.session_state["source"] == "synthetic_robust"
    assert "source=folder (this server offers no curator's folder" in notice
    at.switch_page("pages/data.py").run()
    assert SOURCES["folder"] not in at.radio(key="source").options


def test_a_link_naming_a_location_or_an_unknown_folder_is_replaced_never_read(folder):
    at, notice = notices({"source": "folder", "folder": str(folder)})
    assert not at.exception
    assert "(not a folder this server offers; set it with “Folder” on the Data page)" in notice
    assert str(folder.parent) not in notice  # quoted cut short: never the whole location
    at.switch_page("pages/data.py").run()
    assert not at.exception and not at.error
    assert at.session_state["folder"] == "income"  # the first the deployment names, never the link's path


def test_a_folder_that_cannot_be_read_is_one_sentence_naming_no_location(folder):
    at = app("data", {"source": "folder", "folder": "other"})
    assert not at.exception
    (error,) = at.error
    assert error.value.startswith("No Parquet or CSV files (names ending .parquet or .csv) in the curator's folder "
                                  "other; check “Folder” on the Data page")
    assert "nowhere" not in error.value and "secret-location" not in error.value


def test_the_pipeline_releases_in_blocks_and_compare_refuses_in_one_sentence(folder):
    at = app("pipeline", {"source": "folder", "upload_loss": "logistic"})
    assert not at.exception and not at.error
    assert "curator's folder “income”, read in blocks" in text(at)
    at = app("compare", {"source": "folder"})
    assert not at.exception
    (error,) = at.error
    assert "every row in memory" in error.value


def test_publish_mode_charges_the_folders_people_and_a_changed_file_is_read_again(folder, monkeypatch):
    monkeypatch.setenv("PSP_CAP_EPSILON", "5")
    at = app("pipeline", {"source": "folder", "mode": "publish", "epsilon": "2"})
    at.button(key="release").click().run()
    assert not at.exception and not at.error
    (entry,) = open_ledger().publications()
    assert entry.population.describe() == "the rows of the folder income"
    assert str(folder.parent) not in text(at)
    first = sorted(folder.glob("*.parquet"))[0]
    pq.write_table(pq.read_table(first).slice(1), first)  # one person fewer: other people, read again
    at.run()
    assert not at.exception and not at.error
    at.button(key="release").click().run()
    assert not at.exception and not at.error
    assert len(open_ledger().publications()) == 2  # other rows: a budget of their own, not refused past the cap


def test_on_a_publish_only_server_a_reader_never_keys_the_folder_and_an_analyst_does_once(folder, monkeypatch):
    """Keying a folder's people writes scratch files on the server: a reader's link does not start it (the sidebar
    says who may); a signed-in analyst's page does, and from then on every browser reads the ledger of those people."""
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    loaded._KEYED.clear()
    reader = new_app(120, {"source": "folder"})
    reader.run()  # the Start page, whose sidebar shows the people's ledger
    assert not reader.exception and not loaded._KEYED
    assert f"**Ledger** · {WRITES_REFUSED}" in [m.value for m in reader.sidebar.markdown]
    open_charged(None, default_cap()).add_analyst("ana", (100.0, 1e-3))
    analyst = app("pipeline", {"source": "folder"}, analyst="ana")
    assert not analyst.exception and not analyst.error and len(loaded._KEYED) == 1
    reader.run()
    assert "**Ledger** · spent ε = 0, δ = 0 on these people" in [m.value for m in reader.sidebar.markdown]


def test_a_reader_is_never_told_nothing_was_published_on_a_folder_this_server_has_not_keyed(folder, monkeypatch):
    """After a server's restart (its keys gone) a reader cannot have the folder keyed, so whether anything was
    published on its people is unknown there: the Report and the Pipeline say so, never that nothing was."""
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    monkeypatch.setenv("PSP_CAP_EPSILON", "5")
    open_charged(None, default_cap()).add_analyst("ana", (100.0, 1e-3))
    analyst = app("pipeline", {"source": "folder", "epsilon": "2"}, analyst="ana")
    analyst.button(key="release").click().run()
    assert not analyst.exception and len(open_ledger().publications()) == 1
    loaded._KEYED.clear()  # a restarted server
    for page in ("report", "pipeline"):
        reader = app(page, {"source": "folder"})
        assert not reader.exception and not loaded._KEYED
        assert loaded.UNKEYED in [m.value for m in reader.info], page
        assert "Nothing has been published" not in text(reader) and "Nothing released yet" not in text(reader)


def test_a_deployment_scheduler_that_is_no_address_is_one_sentence_naming_the_setting(folder, monkeypatch):
    monkeypatch.setenv("PSP_SCHEDULER", "http://head:8786?token=abc")
    at = app("data", {"source": "folder"})
    assert not at.exception
    (error,) = at.error
    assert "PSP_SCHEDULER" in error.value and "token" not in error.value


@pytest.mark.slow
def test_the_deployments_cluster_gives_the_release_of_this_servers_cores(folder, monkeypatch):
    """PSP_SCHEDULER runs every pass on a dask.distributed cluster (here a LocalCluster of two workers): the same fit,
    certificates and release from the same seed as on the server's own cores."""
    from distributed import LocalCluster

    def released() -> list[tuple[str, str]]:
        at = app("pipeline", {"source": "folder", "noise_seed": "11", "upload_loss": "logistic"})
        assert not at.exception and not at.error
        return [(m.label, m.value) for m in at.metric]

    here = released()
    st.cache_resource.clear()  # the scheduler says how the rows are read, not which: the cached fit would stand
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        monkeypatch.setenv("PSP_SCHEDULER", cluster.scheduler_address)
        assert released() == here
        assert cluster.scheduler.transition_counter > 0  # the passes ran there
    assert any(label.startswith("Released value") for label, _ in here)
