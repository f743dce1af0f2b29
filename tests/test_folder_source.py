"""A curator's folder as a data source of the library and the app: the deployment names folders and a scheduler (never
a user), the spec opens a folder without loading it, every charged route keys the people from the files the release
read, and the app offers the folder by name only."""

from __future__ import annotations

import logging
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

import core.plan
from core.data.folder import FolderData
from core.data.passes import check_scheduler
from core.data.spec import FolderSpec, curated_folders, data_loss
from core.data.synthetic import write_folder
from core.errors import DataError, InputError, ReleaseFailed
from core.estimator.model import ModelSpec
from core.estimator.rounding import SUM_BLOCK
from core.mechanisms.pipeline import prepare_spec
from core.plan import ReleasePlan, charge_and_execute
from core.privacy.access import CURATOR
from core.privacy.accounting import make_budget
from core.privacy.ledger_store import open_ledger


def test_a_deployment_names_its_folders_and_unusable_entries_are_left_out_unquoted(caplog):
    text = ("income=/data/income; acs5 = s3://b/p?endpoint_override=h:9000\nbad name=/x\n=/y\nno-location\n"
            "twice=/a;twice=/b")
    with caplog.at_level(logging.WARNING):
        assert curated_folders(text) == {"income": "/data/income", "acs5": "s3://b/p?endpoint_override=h:9000",
                                         "twice": "/a"}
    assert len(caplog.records) == 3 and all("/x" not in r.getMessage() for r in caplog.records)
    assert curated_folders({"a": "/x", "b": 3, "c d": "/y"}) == {"a": "/x"}
    assert curated_folders(None) == curated_folders("") == curated_folders(7) == {}


@pytest.mark.parametrize("address", ["tcp://host:8786", "tls://10.0.0.1:8786", "tcp://[::1]:8786", None])
def test_a_scheduler_address_is_tcp_or_tls_with_a_port(address):
    assert check_scheduler(address) == address


@pytest.mark.parametrize("address", ["http://h:1", "tcp://h", "tcp://h:1/x", " tcp://h:1", "", 8786, "tcp://:1"])
def test_anything_else_is_refused_naming_where_it_was_set_never_quoting_it(address):
    with pytest.raises(InputError) as err:
        check_scheduler(address, "the deployment setting scheduler (PSP_SCHEDULER)")
    assert str(err.value).startswith("the deployment setting scheduler (PSP_SCHEDULER) must be")
    assert str(address) not in str(err.value).replace("tcp://host:8786", "") or address == ""


def test_a_folder_opens_without_loading_its_rows_and_prepares_as_the_command_line_does(tmp_path):
    write_folder(str(tmp_path), 9_000, 3, "logistic", seed=2, file_rows=4_000)
    spec = FolderSpec(str(tmp_path), block_rows=SUM_BLOCK, name="income")
    data = spec.load()
    assert isinstance(data, FolderData) and (data.n, data.d) == (9_000, 3) and data.theta_star is None
    np.testing.assert_array_equal(data.labels, [-1.0, 1.0])  # the response's distinct values, not its rows
    assert data.source == "the files of the curator's folder “income”, read in blocks"
    assert str(tmp_path) not in data.source and str(tmp_path) not in spec.population().describe()
    assert data_loss(spec, data, None)[0] == "logistic"
    problem = prepare_spec(data, ModelSpec("logistic"), spec)
    assert problem.n == 9_000 and problem.fit.has_minimiser and problem.data_spec == spec


def test_a_folder_of_many_values_refuses_the_logistic_loss_without_a_false_count(tmp_path):
    write_folder(str(tmp_path), 5_000, 2, "robust", seed=0)
    spec = FolderSpec(str(tmp_path))
    with pytest.raises(DataError, match="takes more than two values") as err:
        data_loss(spec, spec.load(), "logistic")
    assert err.value.setting == "loss"
    assert data_loss(spec, spec.load(), None)[0] == "robust"


def test_a_prepared_folder_can_only_be_prepared_from_its_spec(tmp_path):
    write_folder(str(tmp_path), 5_000, 2, seed=0)
    with pytest.raises(InputError, match="prepared from its spec"):
        prepare_spec(FolderSpec(str(tmp_path)).load(), ModelSpec("robust"))


def test_every_charged_route_refuses_a_folder_rewritten_after_it_was_prepared_charging_nothing(tmp_path):
    """The library's charge (core.plan), not only the command line, keys the people from the files the problem read:
    a file rewritten between preparing the problem and charging it ends the release before any charge."""
    root = tmp_path / "parts"
    write_folder(str(root), 9_000, 2, seed=1, file_rows=5_000)
    spec = FolderSpec(str(root), block_rows=SUM_BLOCK)
    problem = prepare_spec(spec.load(), ModelSpec("robust"), spec)
    first = sorted(root.glob("*.parquet"))[0]
    pq.write_table(pq.read_table(first).slice(1), first)  # one row fewer: other people
    ledger = open_ledger(str(tmp_path / "book.sqlite3"))
    plan = ReleasePlan(data=FolderSpec(str(root), block_rows=SUM_BLOCK), model=problem.model, target=1,
                       name=problem.feature_names[1], budget=make_budget(1.0, 1e-6))
    with pytest.raises(DataError, match="changed while they were read"):
        charge_and_execute(plan, problem, ledger, spender=CURATOR)
    assert not ledger.entries(plan.data.population())


def test_a_file_swapped_during_the_stages_with_its_time_set_back_ends_the_release_as_failed(tmp_path, monkeypatch):
    """A file written during the private stages, its size kept and its time of change set back (what each read
    checks), is still told by its status change: the release ends before it is recorded or shown, its charge kept and
    recorded as failed, so the rows drawn on cannot differ unseen from the rows keyed."""
    root = tmp_path / "parts"
    write_folder(str(root), 9_000, 2, seed=1, file_rows=5_000)
    spec = FolderSpec(str(root), block_rows=SUM_BLOCK)
    problem = prepare_spec(spec.load(), ModelSpec("robust"), spec)
    first = sorted(root.glob("*.parquet"))[0]
    real = core.plan.execute

    def swapped_meanwhile(plan, problem):
        run = real(plan, problem)
        before = first.stat()
        first.write_bytes(first.read_bytes())  # written (the same bytes, or others of the same size), then
        os.utime(first, ns=(before.st_atime_ns, before.st_mtime_ns))  # its time of change set back
        return run

    monkeypatch.setattr(core.plan, "execute", swapped_meanwhile)
    ledger = open_ledger(str(tmp_path / "book.sqlite3"))
    ledger.set_default_cap((10.0, 1e-5))
    plan = ReleasePlan(data=spec, model=problem.model, target=1, name=problem.feature_names[1],
                       budget=make_budget(1.0, 1e-6))
    with pytest.raises(ReleaseFailed, match="changed while they were read"):
        charge_and_execute(plan, problem, ledger, spender=CURATOR)
    (entry,) = ledger.entries(plan.data.population())
    assert entry.details.outcome == "failed" and entry.details.value is None

