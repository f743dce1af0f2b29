"""Whose budget an upload spends: one key for the same rows however the file is written (core.data.rows,
core.privacy.population.content_key), none for a file whose rows cannot be put in canonical form."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.data.csvfile import DELIMITERS
from core.data.spec import CsvSpec
from core.errors import DataError, Refused
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec
from core.plan import ReleasePlan, charge_and_execute
from core.privacy.access import CURATOR
from core.privacy.accounting import split_budget
from core.privacy.charge import open_charged
from core.privacy.population import content_key

CODINGS = {  # a label's two values as each writing spells them: (for False, for True)
    "0/1": ("0", "1"), "1/0": ("1", "0"), "-1/+1": ("-1", "+1"), "1/2": ("1", "2"), "true/false": ("false", "true"),
    "True/False": ("False", "True"), "TRUE/FALSE": ("FALSE", "TRUE"), "yes/no": ("no", "yes"),
    "Yes/No": ("No", "Yes"), "two words": ("neg", "pos"),
}
FORMATS = {"repr": repr, "%.17g": lambda x: f"{x:.17g}", "%.6e": lambda x: f"{x:.6e}", "+%g": lambda x: f"{x:+g}"}
RESCALINGS = {"as is": lambda x: x, "in thousandths": lambda x: x * 1000, "negated": lambda x: -x,
              "shifted": lambda x: x + 40, "exponential": math.exp}


def write(features: np.ndarray, labels: np.ndarray, *, coding: str = "0/1", order: tuple | None = None,
          rows: tuple | None = None, crlf: bool = False, bom: bool = False, quoted: bool = False, sep: str = ",",
          number: str = "repr", rescale: str = "as is", final_newline: bool = True) -> bytes:
    """The rows (features by column, a 0/1 label) written as a CSV one of the accepted ways."""
    d = features.shape[1]
    names = [f"x{j}" for j in range(d)] + ["y"]
    fmt, f = FORMATS[number], RESCALINGS[rescale]
    cells = [[fmt(f(float(v))) if j == 0 else fmt(float(v)) for j, v in enumerate(row)] + [CODINGS[coding][int(b)]]
             for row, b in zip(features, labels, strict=True)]
    order = order or tuple(range(d + 1))
    rows = rows or tuple(range(len(cells)))
    quote = (lambda c: f'"{c}"') if quoted else (lambda c: c)
    lines = [sep.join(quote(names[j]) for j in order)] + [sep.join(quote(cells[i][j]) for j in order) for i in rows]
    end = "\r\n" if crlf else "\n"
    text = end.join(lines) + (end if final_newline else "")
    return (("\ufeff" if bom else "") + text).encode()


def key(content: bytes) -> str:
    return CsvSpec.from_bytes("rows.csv", content).key


@st.composite
def tables(draw) -> tuple[np.ndarray, np.ndarray]:
    """Small tables of eighths (exact in every format) with a 0/1 label."""
    n, d = draw(st.integers(2, 25)), draw(st.integers(1, 3))
    values = draw(st.lists(st.integers(-40, 40), min_size=n * d, max_size=n * d))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return np.array(values, dtype=float).reshape(n, d) / 8, np.array(labels)


@st.composite
def writings(draw, d: int, n: int) -> dict:
    return dict(coding=draw(st.sampled_from(sorted(CODINGS))), order=tuple(draw(st.permutations(range(d + 1)))),
                rows=tuple(draw(st.permutations(range(n)))), crlf=draw(st.booleans()), bom=draw(st.booleans()),
                quoted=draw(st.booleans()), sep=draw(st.sampled_from(DELIMITERS)),
                number=draw(st.sampled_from(sorted(FORMATS))), rescale=draw(st.sampled_from(sorted(RESCALINGS))),
                final_newline=draw(st.booleans()))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), table=tables())
def test_every_writing_of_the_same_rows_has_one_key(data, table):
    features, labels = table
    base = key(write(features, labels))
    other = data.draw(writings(features.shape[1], features.shape[0]))
    assert base and key(write(features, labels, **other)) == base


@settings(max_examples=60, deadline=None)
@given(table=tables())
def test_one_more_person_is_other_rows(table):
    features, labels = table
    grown = np.vstack([features, features[:1] + 100]), np.append(labels, 1)
    assert key(write(*grown)) != key(write(features, labels))


def test_a_label_moved_to_another_person_is_other_rows():
    features = np.arange(12.0).reshape(6, 2)
    labels = np.array([1, 1, 0, 0, 0, 1])
    moved = np.array([0, 1, 1, 0, 0, 1])
    assert key(write(features, moved)) != key(write(features, labels))


def test_a_balanced_column_coded_either_way_is_the_same_people():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 2))
    y = np.r_[np.ones(100), np.zeros(100)]
    assert content_key(np.column_stack([x, y])) == content_key(np.column_stack([x, 1 - y]))
    assert content_key(np.column_stack([x, y])) == content_key(np.column_stack([-x[:, ::-1], y]))


def test_the_exact_sum_that_turns_a_column_does_not_overflow():
    from core.privacy.population import exact_dot

    a = np.full(10_000, 2**40, np.int64)
    assert exact_dot(a, a) == 10_000 * 2**80
    small = np.arange(-500, 500, dtype=np.int64)
    assert exact_dot(small, small[::-1]) == int(sum(int(u) * int(v) for u, v in zip(small, small[::-1], strict=True)))
    rng = np.random.default_rng(1)
    b = rng.integers(-(2**59), 2**59, 5_000)  # a spread of rows whose ranks reach 2^27
    for a in (rng.integers(-(2**27), 2**27, 5_000), rng.integers(-(2**40), 2**40, 5_000)):
        assert exact_dot(a, b) == sum(int(x) * int(y) for x, y in zip(a.tolist(), b.tolist(), strict=True))
    assert exact_dot(np.array([3, -5]), np.array([-(2**63), 7])) == 3 * -(2**63) - 35  # -2^63 has no int64 negation


@pytest.mark.parametrize("content", [b"x,y\n1,a\n2,b\n3,c\n", b"x,y\n1,\n2,1\n", b"x,y\n1,nan\n2,1\n",
                                     b"x,y\n1\n2,1\n", b"x,y\n", b"\xff\xfe"])
def test_a_file_with_no_canonical_rows_cannot_be_charged(content):
    spec = CsvSpec.from_bytes("odd.csv", content)
    assert spec.key == ""
    with pytest.raises(DataError, match="cannot be charged") as err:
        spec.population()
    assert err.value.setting == "data"


def test_the_four_writings_release_once_under_a_cap_of_one_release(tmp_path):
    rng = np.random.default_rng(11)
    features = np.round(rng.uniform(-1, 1, size=(2_000, 2)), 6)
    labels = (rng.random(2_000) < 1 / (1 + np.exp(-features @ np.array([1.5, -1.0])))).astype(int)
    variants = [write(features, labels, coding="true/false"),
                write(features, labels, coding="true/false", crlf=True),
                write(features, labels, coding="True/False", order=(1, 0, 2)),
                write(features, labels, coding="0/1")]
    book = open_charged(tmp_path / "ledger.sqlite3", (2.0, 1e-5))
    outcomes = []
    for i, content in enumerate(variants):
        spec = CsvSpec.from_bytes(f"writing{i}.csv", content)
        data = spec.load(content)
        problem = prepare_spec(data, ModelSpec("logistic"), spec)
        plan = ReleasePlan(data=spec, model=problem.model, target=0, name=data.feature_names[0],
                           budget=split_budget(2.0, 1e-6))
        try:
            charge_and_execute(plan, problem, book, spender=CURATOR)
            outcomes.append("released")
        except Refused:
            outcomes.append("refused")
    assert outcomes == ["released", "refused", "refused", "refused"]
    assert len(book.parts_charged()) == 2  # the rows' key and the key they had before: one set of people
