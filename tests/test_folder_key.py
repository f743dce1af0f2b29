"""The people's key of a folder read in blocks (core.data.folder_key) is content_key's for the same rows, however the
rows are split into files and chunks, so a folder and a file of the same people share one budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.data.folder_key import folder_key
from core.errors import DataError
from core.privacy.population import content_key


def _column(rng: np.random.Generator, kind: int, n: int, before: list[np.ndarray]) -> np.ndarray:
    """A column of one of the shapes content_key treats apart: distinct values, ties, a balanced two-valued column
    (counts the same both ways), one value (folded), signed zeros, or a copy of the last (columns of one kind)."""
    if kind == 0:
        return rng.normal(size=n)
    if kind == 1:
        return rng.integers(0, 3, n).astype(float)
    if kind == 2:
        return rng.permutation(np.arange(n) % 2).astype(float)
    if kind == 3:
        return np.full(n, 2.5)
    if kind == 4:
        return rng.choice([-0.0, 0.0, 1.0, -1.0], n)
    return before[-1].copy() if before else -np.arange(n, dtype=float)


def _write(table: np.ndarray, root, files: int, rng: np.random.Generator, csv: bool = False) -> None:
    cuts = np.sort(rng.choice(np.arange(1, table.shape[0]), files - 1, replace=False))
    for k, part in enumerate(np.split(table, cuts)):
        frame = {f"c{j}": part[:, j] for j in range(table.shape[1])}
        if csv:
            pd.DataFrame(frame).to_csv(root / f"p{k:03d}.csv", index=False, float_format="%.17g")
        else:
            pq.write_table(pa.table(frame), root / f"p{k:03d}.parquet")


@pytest.mark.parametrize("seed", range(3))
def test_the_key_is_content_keys_for_any_files_and_any_chunk(tmp_path, seed):
    rng = np.random.default_rng(seed)
    for trial in range(12):
        d = int(rng.integers(1, 6))
        n = int(rng.integers(d + 2, 50))
        columns: list[np.ndarray] = []
        for _ in range(d):
            columns.append(_column(rng, int(rng.integers(0, 6)), n, columns))
        table = np.stack(columns, axis=1)
        root = tmp_path / f"{trial}"
        root.mkdir()
        _write(table, root, int(rng.integers(1, 4)), rng, csv=trial % 5 == 4)
        want = content_key(table)
        assert all(folder_key(root, chunk) == want for chunk in (1, 3, 64)), (seed, trial, n, d)
        assert folder_key(root, 3, jobs=3) == want  # the columns ranked side by side, as from PARALLEL_ROWS rows


def test_a_turn_decided_by_the_exact_sums_and_a_fold_match_content_key(tmp_path):
    """Columns of distinct values have counts that read the same both ways: their turn is decided by the sums against
    the turned columns (here, a skewed one), and a column of one value is folded."""
    rng = np.random.default_rng(7)
    skewed = np.repeat([0.0, 1.0, 2.0], [20, 7, 3])
    rng.shuffle(skewed)
    table = np.column_stack([skewed, skewed * 3 + rng.normal(scale=0.1, size=30), -skewed + rng.normal(size=30),
                             np.full(30, 1.0)])
    _write(table, tmp_path, 3, rng)
    assert folder_key(tmp_path, 4) == content_key(table)
    # and a turned column written backwards keeps the key
    (tmp_path / "b").mkdir()
    _write(np.column_stack([table[:, 0], -table[:, 1], table[:, 2], table[:, 3]]), tmp_path / "b", 2, rng)
    assert folder_key(tmp_path / "b", 5) == content_key(table)


def test_a_folder_with_a_column_of_words_has_no_key(tmp_path):
    (tmp_path / "a.csv").write_text("x,y,name\n1,0,ann\n2,1,bob\n3,0,cy\n4,1,di\n")
    with pytest.raises(DataError, match="not a number"):
        folder_key(tmp_path)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_folder_with_a_number_that_is_not_finite_has_no_key(tmp_path, bad):
    """content_key keys finite numbers only, so a file holding a NaN or an infinity has none; its folder has none
    either (a NaN, unequal to itself, would otherwise rank as the chunks fall and key the same rows two ways)."""
    x = np.arange(10.0)
    y = np.array([bad, 1, bad, 2, 3, bad, 1, 2, 0, bad])
    pq.write_table(pa.table({"x": x[:4], "y": y[:4]}), tmp_path / "a.parquet")
    pq.write_table(pa.table({"x": x[4:], "y": y[4:]}), tmp_path / "b.parquet")
    with pytest.raises(ValueError, match="finite"):
        content_key(np.column_stack([x, y]))
    for chunk in (1, 3, 64):
        with pytest.raises(DataError, match="column y of a.parquet .* not a finite number"):
            folder_key(tmp_path, chunk)
    (tmp_path / "c").mkdir()  # a CSV reads "inf" as an infinity
    (tmp_path / "c" / "a.csv").write_text("x,y\n1,0\n2,1\n3,1\n")
    (tmp_path / "c" / "b.csv").write_text("x,y\n4,inf\n5,0\n")
    with pytest.raises(DataError, match="column y of b.csv .* not a finite number"):
        folder_key(tmp_path / "c", 2)
