"""SYNTHETIC census samples (core.data.census_sample, core.data.spec.SyntheticCensusSpec): their own folder, made
once, a population of their own, a range every surface shares, and a label no document loses.

Every record here is SYNTHETIC, made up by the seeded generator of core.data.synthetic_pums: no real person.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from apptest import on_page

from core.cli import build_parser, main, spec_from_args
from core.data import acs, census_sample, synthetic_pums
from core.data.spec import (
    MAX_SAMPLE_ROWS,
    MIN_SAMPLE_ROWS,
    SAMPLE_ROWS,
    SYNTHETIC_CENSUS,
    AcsSpec,
    SyntheticCensusSpec,
    model_loss,
)
from core.errors import DataError, InputError
from core.privacy.ledger import Ledger
from core.privacy.population import SYNTHETIC_CENSUS as KIND
from core.privacy.population import Population
from core.settings import RANGES
from ui.labels import message
from ui.params import PARAMS, link_value
from ui.report_text import privacy_unit

ROWS = MIN_SAMPLE_ROWS  # the smallest sample: about 0.3 s to make


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A per-user cache of the test's own ($XDG_CACHE_HOME), so no sample is written into the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "private-single-parameter"


# ---------------------------------------------------------------- where it lives, made once


def test_samples_live_beside_the_census_folder_never_inside_it(cache):
    assert acs.default_root() == cache / "acs" and acs.sample_root() == cache / "synthetic-acs"
    spec = SyntheticCensusSpec(("CA",), rows=ROWS)
    folder = spec.make()
    assert folder == census_sample.folder(ROWS) and acs.sample_root() in folder.parents
    assert acs.census_path(folder, "CA").is_file()
    assert not acs.default_root().exists()  # nothing was written where census files are read
    assert acs.in_sample_root(folder) and acs.in_sample_root(acs.sample_root())
    assert not acs.in_sample_root(acs.default_root()) and not acs.in_sample_root(cache)


def test_census_files_are_never_read_from_the_samples_folder(cache):
    folder = SyntheticCensusSpec(("CA",), rows=ROWS).make()
    for root in (folder, acs.sample_root()):
        with pytest.raises(DataError, match="holds SYNTHETIC census samples") as err:
            AcsSpec(("CA",), root=str(root)).load()
        assert err.value.setting == "acs_root" and "--acs-root" in str(err.value)
        assert "“Data folder” on the Data page" in message(err.value)


def test_a_sample_is_made_once_with_progress_and_then_read_again():
    shares: list[float] = []
    spec = SyntheticCensusSpec(("CA",), rows=ROWS)
    path = acs.census_path(spec.make(shares.append), "CA")
    assert shares and shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 1
    written = path.stat().st_mtime_ns
    again: list[float] = []
    spec.make(again.append)  # a second click, or another session: the file is found
    data = SyntheticCensusSpec(("CA", "MI"), rows=ROWS, n=300, sample_seed=1).load()  # MI alone is written
    assert again == [] and path.stat().st_mtime_ns == written and data.n == 300
    assert acs.census_path(census_sample.folder(ROWS), "MI").is_file()
    assert not list(census_sample.folder(ROWS).rglob("*.partial"))


# ---------------------------------------------------------------- its identity and its words


def test_the_spec_says_synthetic_and_keys_a_population_of_its_own():
    spec = SyntheticCensusSpec(" ca,mi ", rows=ROWS, n=200, sample_seed=3)
    assert spec.states == ("CA", "MI") and spec.fixed_loss == "logistic" and spec.default_domain == "ball"
    assert spec.describe().startswith(SYNTHETIC_CENSUS) and "seed 3" in spec.describe()
    people = spec.population()
    assert people.kind == KIND and "SYNTHETIC" in people.describe() and "no real person" in people.describe()
    real = AcsSpec(("CA", "MI")).population()
    assert people != real and not set(people.parts()) & set(real.parts())
    assert people.parts() == (SyntheticCensusSpec(("CA",), rows=ROWS).population(),
                              SyntheticCensusSpec(("MI",), rows=ROWS).population(),
                              Population.census_samples_of("CA", 2018, "1-Year"),
                              Population.census_samples_of("MI", 2018, "1-Year"))  # each state's samples share a cap
    same = {SyntheticCensusSpec(("MI", "CA"), rows=ROWS).population(),
            SyntheticCensusSpec(("CA", "MI"), rows=ROWS, n=50, with_replacement=True).population()}
    assert same == {people}  # the sample drawn from it chooses rows among the same made-up people
    assert SyntheticCensusSpec(("CA", "MI"), rows=ROWS + 1).population() != people  # another made-up population
    assert "unseeded" in SyntheticCensusSpec(("CA",), n=10).describe()
    with pytest.raises(InputError, match="logistic"):
        model_loss(spec, "robust")


def test_the_ledger_never_mixes_a_sample_with_real_people():
    ledger = Ledger(default_cap=(10.0, 1e-5))
    ledger.spend(SyntheticCensusSpec(("CA",), rows=ROWS).population(), 4.0, 1e-6)
    assert ledger.spent(AcsSpec(("CA",)).population()) == (0.0, 0.0)
    ledger.spend(AcsSpec(("CA",)).population(), 1.0, 1e-7)
    assert ledger.spent(SyntheticCensusSpec(("CA", "MI"), rows=ROWS).population()) == (4.0, 1e-6)


def census_words(texts: list[str]) -> list[str]:
    """The texts that name census data (census, or the ACS) without saying they are SYNTHETIC (the ledger's name of
    the population's kind, synthetic_census, says it)."""
    return [t for t in texts if re.search(r"census|\bACS\b", t, re.I) and "SYNTHETIC" not in t and t != KIND]


def strings(value: object) -> list[str]:
    """Every string in a JSON document, keys included."""
    if isinstance(value, dict):
        return [*value, *(s for v in value.values() for s in strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def sentences(page: str) -> list[str]:
    """An HTML page's text, sentence by sentence."""
    text = html.unescape(re.sub(r"<style.*?</style>|<[^>]+>", "\n", page, flags=re.S))
    return [s.strip() for line in text.splitlines() for s in re.split(r"(?<=\.) ", line) if s.strip()]


def test_no_document_of_a_sample_calls_it_census_data_without_saying_synthetic(capsys, downloads):
    """A publication on a SYNTHETIC sample: its description, its private document, the ledger's every view (show,
    publications, export) and the Report (its page and its HTML, read back from the ledger) say SYNTHETIC wherever
    they name census data."""
    ledger = os.environ["PSP_LEDGER"]  # the app below reads the same ledger
    argv = ["release", "--census-sample", str(ROWS), "--state", "CA", "--coordinate", "female", "--epsilon", "4",
            "--delta", "1e-6", "--ledger", ledger]
    assert main(argv) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["data"]["source"] == SyntheticCensusSpec(("CA",), rows=ROWS, encoding="centred").describe()
    assert not census_words(strings(document))
    assert any("SYNTHETIC" in a for a in document["assumptions"])
    assert privacy_unit(document).startswith("Privacy unit: a made-up person (SYNTHETIC data: no real person)")
    for view in ("show", "publications", "export"):
        assert main(["ledger", view, "--ledger", ledger]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert "SYNTHETIC" in json.dumps(printed) and not census_words(strings(printed)), view
    at = on_page("report", source="acs", states="CA", census_sample=ROWS)
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    shown = [e.value for kind in ("markdown", "info", "caption") for e in at.main.get(kind)]
    assert any("Read back from the privacy ledger" in t for t in shown)
    assert any(t.startswith("**Data** · SYNTHETIC census-like data") for t in shown)
    assert not census_words([s for t in shown for s in re.split(r"(?<=\.) ", t)])
    _, page = downloads["text/html"]
    assert "SYNTHETIC census-like data (no real person)" in page.decode()
    assert not census_words(sentences(page.decode())), census_words(sentences(page.decode()))


def test_the_words_test_catches_a_lost_label():
    assert census_words(["ACS 2018 1-Year person files of CA", "the census population"]) == [
        "ACS 2018 1-Year person files of CA", "the census population"]
    assert census_words([f"{SYNTHETIC_CENSUS}: made-up records in the layout of the ACS files"]) == []


# ---------------------------------------------------------------- every input is hostile


def test_one_range_of_sizes_on_every_surface(capsys):
    r = RANGES["census_sample"]
    assert (r.low, r.high) == (MIN_SAMPLE_ROWS, MAX_SAMPLE_ROWS) == PARAMS["census_sample"].bounds
    assert r.low <= SAMPLE_ROWS <= r.high and r.low > 10 * len(acs.FEATURE_NAMES)
    for rows in (MIN_SAMPLE_ROWS, MAX_SAMPLE_ROWS):  # taken (nothing is made until it is loaded)
        assert SyntheticCensusSpec(("CA",), rows=rows).rows == rows
        assert link_value("census_sample", str(rows)) == (rows, None)
    for bad in (MIN_SAMPLE_ROWS - 1, MAX_SAMPLE_ROWS + 1, 0, -5, True, 2.5, "50000", None):
        with pytest.raises(DataError) as err:
            SyntheticCensusSpec(("CA",), rows=bad)
        assert err.value.setting == "census_sample" and "“SYNTHETIC records per state” on the Data page" in message(
            err.value)
    for text in (str(MIN_SAMPLE_ROWS - 1), str(MAX_SAMPLE_ROWS + 1), "abc", "1e9", "-1"):
        assert link_value("census_sample", text)[1] is not None, text
    for text in (str(MIN_SAMPLE_ROWS - 1), str(MAX_SAMPLE_ROWS + 1)):
        assert main(["release", "--census-sample", text, "--state", "CA", "--coordinate", "0", "--epsilon", "4",
                     "--delta", "1e-6"]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("error: a SYNTHETIC census sample has") and "--census-sample" in line


@pytest.mark.parametrize("settings, setting, words", [
    (dict(states=("ZZ",)), "state", "unknown state 'ZZ'"),
    (dict(states=("CA",), year=2015), "year", "layout of survey years 2017 and later, got 2015"),
    (dict(states=("CA",), horizon="3-Year"), None, "horizon must be '1-Year' or '5-Year'"),
    (dict(states=()), "state", "name at least one state"),
])
def test_a_sample_that_cannot_be_made_says_what_to_change(settings, setting, words):
    with pytest.raises(DataError, match=re.escape(words)) as err:
        SyntheticCensusSpec(**settings, rows=ROWS).load()
    assert err.value.setting == setting and "Traceback" not in str(err.value)
    assert not list(acs.sample_root().rglob("*.csv"))


def test_a_folder_that_cannot_be_written_is_one_message(cache):
    cache.mkdir(parents=True)
    acs.sample_root().write_text("not a folder")  # no folder can be made there, whoever runs the test
    with pytest.raises(DataError, match="could not be written in .*XDG_CACHE_HOME") as err:
        SyntheticCensusSpec(("CA",), rows=ROWS).make()
    assert "\n" not in str(err.value)


def test_the_command_line_builds_the_same_spec():
    parse = build_parser().parse_args
    args = parse(["release", "--census-sample", "2000", "--state", "CA", "--state", "MI", "--n", "300",
                  "--sample-seed", "4", "--with-replacement", "--coordinate", "0", "--epsilon", "1", "--delta", "1e-6"])
    assert spec_from_args(args) == SyntheticCensusSpec(("CA", "MI"), 2018, "1-Year", 2000, 300, 4, True, "centred")
    paper = parse(["release", "--census-sample", "2000", "--state", "CA", "--encoding", "paper", "--coordinate", "0",
                   "--epsilon", "1", "--delta", "1e-6"])
    assert spec_from_args(paper) == SyntheticCensusSpec(("CA",), 2018, "1-Year", 2000, encoding="paper")
    with pytest.raises(SystemExit):  # one source at a time
        parse(["release", "--census-sample", "2000", "--acs-root", "x", "--coordinate", "0", "--epsilon", "1",
               "--delta", "1e-6"])


@pytest.mark.parametrize("encoding", ["paper", "centred"])
def test_a_notebook_of_a_run_on_a_sample_makes_and_reads_the_same_sample(tmp_path, encoding):
    """The downloaded code names the sample by its spec, encoding included: it makes it where it is missing and
    replays a seeded run."""
    from dataclasses import replace

    from test_reproduce import expected, printed, run_notebook

    from core.data.encoding import RADII
    from core.estimator.model import ModelSpec
    from core.plan import ReleasePlan
    from core.privacy.accounting import make_budget
    from core.reproduce import notebook, script

    plan = ReleasePlan(data=SyntheticCensusSpec(("CA",), rows=ROWS, encoding=encoding),
                       model=ModelSpec("logistic", "ball", RADII[encoding], 0.0), target=13, name="female",
                       budget=make_budget(4.0, 1e-6), fallback=True, seed=3)
    fresh = script(replace(plan, seed=None))
    assert f"SyntheticCensusSpec(states=('CA',), year=2018, horizon='1-Year', rows={ROWS}" in fresh
    assert f"encoding={encoding!r})" in fresh
    assert "no person's budget is at stake" in fresh and "real data" not in fresh
    want = expected(plan).release
    census_sample.folder(ROWS).joinpath("2018", "1-Year", "psam_p06.csv").unlink()  # another machine: not made yet
    got = printed(run_notebook(notebook(plan), tmp_path))
    assert float(got["value"]) == want.value


# ---------------------------------------------------------------- a SYNTHETIC label is earned by content

SMALL = "WY"  # the smallest state: its sample of ROWS records is written in about 0.05 s


def mismatch(path, state: str = SMALL) -> str:
    """The one sentence that refuses a file at path (the command line's wording)."""
    return (f"{path} does not hold what the SYNTHETIC generator writes for {state}, 2018 1-Year, {ROWS:,} records, so "
            f"it is not read as made-up data; delete the files of {census_sample.folder(ROWS)} and make the sample "
            "again with --census-sample")


def another_process(monkeypatch) -> None:
    """What a new process knows: no digest of its own writing, no file checked yet."""
    monkeypatch.setattr(census_sample, "_EXPECTED", {})
    monkeypatch.setattr(census_sample, "_CHECKED", {})


def test_the_generator_writes_the_same_bytes_every_time(tmp_path):
    ((one, sha),) = synthetic_pums.write_synthetic_pums(tmp_path / "a", [SMALL], rows=ROWS).items()
    ((two, again),) = synthetic_pums.write_synthetic_pums(tmp_path / "b", [SMALL], rows=ROWS).items()
    assert one.read_bytes() == two.read_bytes() and sha == again == hashlib.sha256(one.read_bytes()).hexdigest()
    assert synthetic_pums.synthetic_pums_digest(ROWS, SMALL, census_sample.SEED) == sha  # in memory, no file
    assert synthetic_pums.synthetic_pums_digest(ROWS, "VT", census_sample.SEED) != sha


def test_another_process_computes_the_same_digest():
    code = ("from core.data.synthetic_pums import synthetic_pums_digest as d; "
            f"print(d({ROWS}, {SMALL!r}, {census_sample.SEED}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    assert out == synthetic_pums.synthetic_pums_digest(ROWS, SMALL, census_sample.SEED)


def test_an_untouched_sample_passes_its_check_in_a_new_process(monkeypatch):
    spec = SyntheticCensusSpec((SMALL,), rows=ROWS)
    path = acs.census_path(spec.make(), SMALL)
    another_process(monkeypatch)  # the digest is drawn again in memory, not taken from the writer
    assert spec.load().n > 0
    assert census_sample.expected_digest(SMALL, 2018, ROWS) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert not list(census_sample.folder(ROWS).rglob("*.npz"))  # no encoded cache in the writable folder


def renamed_state(path) -> None:
    census_sample.make(("VT",), 2018, "1-Year", ROWS)
    path.write_bytes(acs.census_path(census_sample.folder(ROWS), "VT").read_bytes())


def one_byte_changed(path) -> None:
    content = bytearray(path.read_bytes())
    content[-3] = ord("1") if content[-3] != ord("1") else ord("2")  # a replicate weight of the last record
    path.write_bytes(bytes(content))


def other_rows(path) -> None:
    (other,) = synthetic_pums.write_synthetic_pums(path.parent.parent.parent / "elsewhere", [SMALL], rows=ROWS,
                                                   seed=census_sample.SEED + 1)
    path.write_bytes(other.read_bytes())


@pytest.mark.parametrize("fresh", [False, True], ids=["same process", "new process"])
@pytest.mark.parametrize("tamper", [renamed_state, one_byte_changed, other_rows])
def test_a_file_the_generator_did_not_write_is_refused_and_kept(monkeypatch, tamper, fresh):
    spec = SyntheticCensusSpec((SMALL,), rows=ROWS, n=200, sample_seed=1)
    path = acs.census_path(spec.make(), SMALL)
    tamper(path)
    planted = path.read_bytes()
    if fresh:
        another_process(monkeypatch)
    for route in (spec.load, spec.make):  # every load, and the Data page's Make button
        with pytest.raises(DataError) as err:
            route()
        assert str(err.value) == mismatch(path) and err.value.setting == "census_sample"
    assert path.read_bytes() == planted  # refused, never overwritten: the curator deletes it
    path.unlink()
    assert spec.load().n == 200  # deleted, the sample is made again


def test_a_refused_file_charges_nothing_on_the_command_line(tmp_path, capsys):
    ledger = str(tmp_path / "refused.sqlite3")
    path = acs.census_path(census_sample.make((SMALL,), 2018, "1-Year", ROWS), SMALL)
    one_byte_changed(path)
    argv = ["release", "--census-sample", str(ROWS), "--state", SMALL, "--coordinate", "female", "--epsilon", "4",
            "--delta", "1e-6", "--ledger", ledger]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {mismatch(path)}"
    assert main(["ledger", "show", "--ledger", ledger]) == 0
    assert json.loads(capsys.readouterr().out)["populations"] == []  # nobody charged


def test_a_refused_file_is_one_sentence_on_the_data_page(monkeypatch):
    """The app, started after the file was replaced, opens the Data page on the sample: it says why and what to do,
    and shows no record."""
    path = acs.census_path(census_sample.make((SMALL,), 2018, "1-Year", ROWS), SMALL)
    renamed_state(path)
    another_process(monkeypatch)
    at = on_page("data", source="acs", states=SMALL, census_sample=ROWS)
    assert not at.exception
    sentence = mismatch(path).replace("--census-sample", "“SYNTHETIC records per state” on the Data page")
    assert sentence in [e.value for e in at.error], [e.value for e in at.error]
    assert not at.dataframe and not at.metric  # no preview, no summary of the planted file


def test_the_census_reader_never_reads_the_samples_folder():
    """A planted file or encoded cache there is never read unchecked, whoever asks."""
    folder = census_sample.make((SMALL,), 2018, "1-Year", ROWS)
    with pytest.raises(DataError, match="holds SYNTHETIC census samples") as err:
        acs.load_state(folder, SMALL)
    assert err.value.setting == "acs_root"
