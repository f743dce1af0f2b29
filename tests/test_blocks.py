"""A folder of Parquet files read in blocks (core.data.folder, core.estimator.blocks): the same fit, certificates and
release as the same rows in memory, from the same noise; bad folders, vanishing files and absent schedulers end in one
sentence."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.cli import main
from core.data import passes
from core.data.folder import Folder, Part, open_folder
from core.data.spec import FolderSpec
from core.data.synthetic import write_folder
from core.errors import DataError, InputError
from core.estimator.blocks import BlockRows, check_block_rows, prepare_folder
from core.estimator.model import ModelSpec
from core.estimator.rounding import SUM_BLOCK
from core.mechanisms.pipeline import make_rng, prepare_model, run_private
from core.privacy.accounting import make_budget
from core.privacy.ledger_store import open_ledger


def _both(root: Path, loss: str, block_rows: int, scheduler: str | None = None, **model: object):
    """The problem prepared in memory from every row of the folder, and the same folder prepared in blocks."""
    folder = open_folder(root)
    X, y = folder.read(0, folder.n)
    spec = ModelSpec(loss, model.pop("domain", "cube"), None, 0.0, model.pop("response_bound", None))
    return (prepare_model(X, y, spec, folder.features),
            prepare_folder(BlockRows(folder, block_rows, None, scheduler), spec, folder.features))


def _same(memory, blocks, seeds=range(3)) -> None:
    """The same fit (theta within 1e-12 relative), counts, certificates and release from the same noise."""
    a, b = memory.fit, blocks.fit
    assert a.status == b.status and a.iterations == b.iterations
    scale = np.max(np.abs(a.theta))
    assert np.max(np.abs(a.theta - b.theta)) <= 1e-12 * scale
    assert b.lambda_min == pytest.approx(a.lambda_min, rel=1e-12) and b.distance == pytest.approx(a.distance, rel=1e-9)
    assert (memory.clipped_rows, memory.clipped_responses) == (blocks.clipped_rows, blocks.clipped_responses)
    budget = make_budget(1.0, 1e-6)
    for seed in seeds:
        ra = run_private(memory, 1, budget, make_rng(seed), fallback=True)
        rb = run_private(blocks, 1, budget, make_rng(seed), fallback=True)
        assert (ra.lambda_min.m, ra.test.passed, ra.release.status) == (rb.lambda_min.m, rb.test.passed,
                                                                         rb.release.status)
        assert (ra.lambda_max is None) == (rb.lambda_max is None)
        if ra.lambda_max is not None:
            assert ra.lambda_max.m == rb.lambda_max.m
        if ra.release.status == "released":
            assert rb.release.value == pytest.approx(ra.release.value, rel=1e-12, abs=1e-15)
            np.testing.assert_allclose(rb.release.interval, ra.release.interval, rtol=1e-12)


@pytest.mark.parametrize("loss", ["robust", "logistic"])
def test_blocks_give_the_fit_certificates_and_release_of_the_rows_in_memory(tmp_path, loss):
    write_folder(str(tmp_path), 30_000, 4, loss, theta_norm=2.0, seed=1, file_rows=7_001)  # blocks span files
    memory, blocks = _both(tmp_path, loss, 2 * SUM_BLOCK)
    assert len(blocks.rows.ranges()) == 3 and blocks.fit.has_minimiser
    _same(memory, blocks)


def test_clipped_rows_responses_and_zero_one_labels_are_counted_and_coded_as_in_memory(tmp_path):
    rng = np.random.default_rng(2)
    n = 9_000
    X = rng.uniform(-1.3, 1.3, size=(n, 3))  # some rows outside the cube
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.5]))).astype(np.int64)  # coded 0/1
    for k, part in enumerate(np.array_split(np.arange(n), 2)):
        pq.write_table(pa.table({"a": X[part, 0], "b": X[part, 1], "c": X[part, 2], "y": y[part]}),
                       tmp_path / f"p{k}.parquet")
    memory, blocks = _both(tmp_path, "logistic", SUM_BLOCK)
    assert blocks.clipped_rows == memory.clipped_rows > 0
    _same(memory, blocks)
    robust_memory, robust_blocks = _both(tmp_path, "robust", SUM_BLOCK, response_bound=0.5)
    assert robust_blocks.clipped_responses == robust_memory.clipped_responses > 0


def test_separable_labels_end_with_no_minimiser_on_both_routes_proven_not_stalled(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(20_000, 3))
    y = np.where(X @ [1.0, -2.0, 0.5] > 0, 1.0, -1.0)
    pq.write_table(pa.table({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y}), tmp_path / "p.parquet")
    memory, blocks = _both(tmp_path, "logistic", SUM_BLOCK)
    for problem in (memory, blocks):
        assert problem.fit.status == "no_minimiser" and "the labels are separable" in problem.fit.diagnosis
    assert blocks.fit.lambda_min == memory.fit.lambda_min == 0.0


def test_the_block_cuts_keep_the_gram_within_its_proven_depth():
    """Every block but the last has block_rows rows and the last takes the rest: with two blocks or more none has more
    than n - 2^12 rows (core.estimator.rounding.gram_depth), and every block starts on a SUM_BLOCK boundary."""
    for n in (SUM_BLOCK, 10_000, 3 * 2**19 - 1, 3 * 2**19, 10**8):
        for m in (SUM_BLOCK, 2**17, 2**19):
            cuts = BlockRows(_fake_folder(n), m).ranges()
            assert cuts[0][0] == 0 and cuts[-1][1] == n and all(a % SUM_BLOCK == 0 for a, _ in cuts)
            assert all(b1 == a2 for (_, b1), (a2, _) in zip(cuts, cuts[1:], strict=False))
            if len(cuts) > 1:
                assert max(b - a for a, b in cuts) <= n - 2**12


def _fake_folder(n: int) -> Folder:
    return Folder("nowhere", (Part("nowhere/a.parquet", n, 0, 0),), ("x0",), "y")


@pytest.mark.parametrize("rows", [0, 4095, 4097, 2**25, True, 2.0 * SUM_BLOCK])
def test_a_block_size_off_the_grid_is_refused(rows):
    with pytest.raises(InputError, match="multiple of 4096"):
        check_block_rows(rows)


def test_files_that_disagree_are_refused_naming_both(tmp_path):
    write_folder(str(tmp_path), 5_000, 3, seed=0, file_rows=2_500)
    pq.write_table(pa.table({"x0": np.arange(10), "x1": np.zeros(10), "x2": np.zeros(10), "y": np.zeros(10)}),
                   tmp_path / "part-00002.parquet")  # x0 as integers
    with pytest.raises(DataError, match="disagree: part-00002.parquet .* than part-00000.parquet"):
        open_folder(tmp_path)


def test_missing_columns_empty_folders_and_text_columns_are_refused(tmp_path):
    with pytest.raises(DataError, match="no Parquet or CSV files"):
        open_folder(tmp_path)
    pq.write_table(pa.table({"x0": ["a", "b"], "y": [1.0, 2.0]}), tmp_path / "a.parquet")
    with pytest.raises(DataError, match="column x0 of a.parquet is not numeric"):
        open_folder(tmp_path)
    with pytest.raises(DataError, match="has no column label"):
        open_folder(tmp_path, response="label")
    (tmp_path / "b.parquet").write_bytes(b"not parquet")
    os.remove(tmp_path / "a.parquet")
    with pytest.raises(DataError, match="b.parquet .* is not a readable Parquet file"):
        open_folder(tmp_path)


def test_a_folder_of_csv_files_reads_as_the_same_rows_in_parquet(tmp_path):
    parquet, text = tmp_path / "parquet", tmp_path / "csv"
    write_folder(str(parquet), 13_000, 3, "robust", seed=5, file_rows=6_000)
    text.mkdir()
    for path in sorted(parquet.glob("*.parquet")):
        table = pq.read_table(path).to_pandas()
        table.to_csv(text / f"{path.stem}.csv", index=False, float_format="%.17g")
    a, b = (BlockRows(open_folder(root), SUM_BLOCK) for root in (parquet, text))
    assert a.n == b.n == 13_000 and a.folder.features == b.folder.features
    for (xa, ya), (xb, yb) in zip(a.blocks(), b.blocks(), strict=True):
        assert np.array_equal(xa, xb) and np.array_equal(ya, yb)
    pa_problem = prepare_folder(a, ModelSpec("robust"), a.folder.features)
    csv_problem = prepare_folder(b, ModelSpec("robust"), b.folder.features)
    assert np.array_equal(pa_problem.fit.theta, csv_problem.fit.theta)


def test_a_csv_cell_that_is_not_a_number_is_refused_by_its_column_never_its_value(tmp_path):
    rows = ["a,b,y"] + [f"{i % 7 / 10},{i % 5 / 10},{i % 3}" for i in range(9_000)]
    rows[8_000] = "0.1,secret-value,1"
    (tmp_path / "p.csv").write_text("\n".join(rows) + "\n")
    data = BlockRows(open_folder(tmp_path), SUM_BLOCK)
    with pytest.raises(DataError, match="column b of p.csv has a cell that is not a number") as e:
        prepare_folder(data, ModelSpec("robust"), data.folder.features)
    assert "secret" not in str(e.value)
    pq.write_table(pa.table({"a": [1.0], "b": [1.0], "y": [1.0]}), tmp_path / "q.parquet")
    with pytest.raises(DataError, match="both Parquet and CSV"):
        open_folder(tmp_path)


def test_empty_files_folders_without_rows_and_columns_named_twice_are_refused(tmp_path):
    (tmp_path / "p.csv").write_text("")
    with pytest.raises(DataError, match="p.csv has no header"):
        open_folder(tmp_path)
    (tmp_path / "p.csv").write_text("x1,y\n")
    with pytest.raises(DataError, match="need more rows than features"):
        open_folder(tmp_path)
    (tmp_path / "p.csv").write_text("a,b,a,y\n1,2,3,4\n")
    with pytest.raises(DataError, match="p.csv names column a twice"):
        open_folder(tmp_path)


def test_a_parquet_file_spoiled_in_place_keeping_its_size_and_time_is_refused_in_one_sentence(tmp_path):
    write_folder(str(tmp_path), 10_000, 3, seed=0, file_rows=5_000)
    rows = BlockRows(open_folder(tmp_path), SUM_BLOCK)
    path = tmp_path / "part-00001.parquet"
    stat = path.stat()
    body = bytearray(path.read_bytes())
    body[-8:] = bytes(8)  # the footer's length and magic, spoiled
    path.write_bytes(bytes(body))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(DataError, match="part-00001.parquet changed, vanished or could not be read"):
        prepare_folder(rows, ModelSpec("robust"), rows.folder.features)


def test_a_file_that_vanishes_or_changes_between_passes_ends_the_run_in_one_sentence(tmp_path):
    write_folder(str(tmp_path), 10_000, 3, seed=0, file_rows=5_000)
    rows = BlockRows(open_folder(tmp_path), SUM_BLOCK)
    os.remove(tmp_path / "part-00001.parquet")
    with pytest.raises(DataError, match="part-00001.parquet changed, vanished or could not be read"):
        prepare_folder(rows, ModelSpec("robust"), rows.folder.features)
    write_folder(str(tmp_path), 10_000, 3, seed=9, file_rows=5_000)  # the same names, other rows
    with pytest.raises(DataError, match="changed, vanished"):
        prepare_folder(rows, ModelSpec("robust"), rows.folder.features)


def test_a_feature_that_is_not_finite_is_refused_with_its_row_in_the_whole_folder(tmp_path):
    X = np.zeros((9_000, 2)) + 0.5
    X[8_500, 1] = np.nan
    for k, part in enumerate(np.array_split(np.arange(9_000), 3)):
        pq.write_table(pa.table({"a": X[part, 0], "b": X[part, 1], "y": np.ones(len(part))}),
                       tmp_path / f"p{k}.parquet")
    rows = BlockRows(open_folder(tmp_path), SUM_BLOCK)
    with pytest.raises(DataError, match=r"first at row 8500, column 1"):
        prepare_folder(rows, ModelSpec("robust"), rows.folder.features)


def test_an_unreachable_scheduler_is_one_sentence_within_the_connect_time(tmp_path, monkeypatch):
    monkeypatch.setattr(passes, "CONNECT_SECONDS", 2)
    write_folder(str(tmp_path), 5_000, 2, seed=0)
    rows = BlockRows(open_folder(tmp_path), SUM_BLOCK, None, "tcp://127.0.0.1:1")
    start = time.monotonic()
    with pytest.raises(DataError, match="did not answer within 2 s") as err:
        prepare_folder(rows, ModelSpec("robust"), rows.folder.features)
    assert time.monotonic() - start < 15
    assert "127.0.0.1" not in str(err.value) and "PSP_SCHEDULER" in str(err.value)  # named by its setting alone


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    """python -m core with args, in this process: its exit status, stdout and stderr."""
    status = main(list(args))
    out = capsys.readouterr()
    return status, out.out, out.err


def test_the_command_line_releases_a_folder_and_refuses_what_it_cannot_do(tmp_path, capsys):
    write_folder(str(tmp_path), 12_000, 3, seed=4, file_rows=5_000)
    status, out, err = _cli(capsys, "release", "--folder", str(tmp_path), "--block-rows", "4096", "--coordinate", "x1",
                            "--epsilon", "2", "--delta", "1e-6", "--seed", "3")
    assert status == 0, err
    doc = json.loads(out)
    assert doc["n"] == 12_000 and doc["fit"]["status"] == "minimiser" and "read in blocks" in doc["source"]
    for refused, words in (
        (["compare"], "for release only"),
        (["release", "--loss", "logistic"], "the label y takes more than two values"),
    ):
        status, _, err = _cli(capsys, *refused, "--folder", str(tmp_path), "--coordinate", "x1", "--epsilon", "2",
                              "--delta", "1e-6")
        assert status == 2 and err.count("\n") == 1 and words in err, err


def test_a_folder_and_a_file_of_the_same_rows_spend_one_budget(tmp_path, capsys):
    """A folder is charged by its rows' content key (core.data.folder_key): the same rows written as one CSV file, in
    another order of rows and columns, find the folder's spending and are refused past the cap."""
    folder, ledger = tmp_path / "parts", str(tmp_path / "book.sqlite3")
    write_folder(str(folder), 12_000, 3, seed=4, file_rows=5_000)
    frame = pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))])
    frame.sample(frac=1.0, random_state=1)[frame.columns[::-1]].to_csv(tmp_path / "same.csv", index=False)
    capped = _cli(capsys, "ledger", "set-cap", "--default", "--epsilon", "3", "--delta", "1e-5", "--ledger", ledger)
    assert capped[0] == 0
    args = ("--coordinate", "x1", "--epsilon", "2", "--delta", "1e-6", "--ledger", ledger)
    status, out, err = _cli(capsys, "release", "--folder", str(folder), "--block-rows", "4096", *args)
    assert status == 0, err
    assert json.loads(out)["data"]["n"] == 12_000
    status, _, err = _cli(capsys, "release", "--data", str(tmp_path / "same.csv"), *args)
    assert status == 2 and "(2, 1e-06) is already spent" in err and err.count("\n") == 1, err
    (only,) = open_ledger(ledger).publications()
    assert only.population.describe() == "the rows of the folder parts"


def test_a_parquet_file_with_pandas_index_is_one_population_as_a_file_and_as_a_folder(tmp_path, capsys):
    """pandas writes a shuffled frame's index into its Parquet file (__index_level_0__) and reads it back as the index,
    not a column: the folder route leaves it out too, so the same file has one key, and one budget, either way."""
    frame = pd.DataFrame(np.random.default_rng(2).standard_normal((6_000, 3)), columns=["a", "b", "y"])
    (tmp_path / "parts").mkdir()
    frame.sample(frac=1.0, random_state=3).to_parquet(tmp_path / "parts" / "rows.parquet")  # the index written
    assert "__index_level_0__" in pq.read_schema(tmp_path / "parts" / "rows.parquet").names
    assert FolderSpec(str(tmp_path / "parts")).load().feature_names == ("a", "b")
    ledger = str(tmp_path / "book.sqlite3")
    capped = _cli(capsys, "ledger", "set-cap", "--default", "--epsilon", "1", "--delta", "1e-5", "--ledger", ledger)
    assert capped[0] == 0
    args = ("--coordinate", "a", "--epsilon", "1", "--delta", "1e-6", "--ledger", ledger)
    status, _, err = _cli(capsys, "release", "--data", str(tmp_path / "parts" / "rows.parquet"), *args)
    assert status == 0, err
    status, _, err = _cli(capsys, "release", "--folder", str(tmp_path / "parts"), "--block-rows", "4096", *args)
    assert status == 2 and "is already spent" in err, err


def test_a_folder_changed_between_the_release_opening_it_and_its_key_is_refused(tmp_path):
    """The key names the people charged: it must be of the files the release reads, so a file rewritten after the
    release opened the folder (and before the key was formed) ends the run before any charge."""
    write_folder(str(tmp_path), 9_000, 2, seed=1, file_rows=5_000)
    spec = FolderSpec(str(tmp_path))
    opened = open_folder(tmp_path)
    first, second = sorted(tmp_path.glob("*.parquet"))
    table = pq.read_table(first)
    pq.write_table(table.slice(1), first)  # one row fewer: other people
    with pytest.raises(DataError, match="changed while they were read"):
        spec.check_keyed(opened)
    keyed = open_folder(tmp_path)
    spec.check_keyed(keyed)  # the files as keyed: nothing to say
    before = second.stat()
    second.write_bytes(second.read_bytes())  # written again, its size and time of change as they were
    os.utime(second, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert open_folder(tmp_path).parts[1].changed == keyed.parts[1].changed
    with pytest.raises(DataError, match="changed while they were read"):  # told by its status change
        spec.check_keyed(keyed)


def test_a_logistic_loss_on_a_response_of_many_values_is_refused_without_a_false_count(tmp_path):
    write_folder(str(tmp_path), 9_000, 2, "robust", seed=0)
    rows = BlockRows(open_folder(tmp_path), SUM_BLOCK)
    with pytest.raises(DataError, match="more than two values"):
        prepare_folder(rows, ModelSpec("logistic"), rows.folder.features)


@pytest.mark.slow
def test_a_scheduler_without_workers_is_refused_rather_than_waited_for(tmp_path, monkeypatch):
    from distributed import LocalCluster

    monkeypatch.setattr(passes, "CONNECT_SECONDS", 2)
    write_folder(str(tmp_path), 5_000, 2, seed=0)
    with LocalCluster(n_workers=0, dashboard_address=None) as cluster:
        rows = BlockRows(open_folder(tmp_path), SUM_BLOCK, None, cluster.scheduler_address)
        with pytest.raises(DataError, match="has no worker after 2 s") as err:
            prepare_folder(rows, ModelSpec("robust"), rows.folder.features)
        assert cluster.scheduler_address.split("//")[1] not in str(err.value)


@pytest.mark.slow
def test_a_two_worker_cluster_gives_the_release_of_the_rows_in_memory(tmp_path):
    from distributed import LocalCluster

    write_folder(str(tmp_path), 40_000, 5, "logistic", theta_norm=2.0, seed=6, file_rows=9_000)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        memory, blocks = _both(tmp_path, "logistic", 2 * SUM_BLOCK, cluster.scheduler_address)
        _same(memory, blocks, seeds=range(2))
