"""The durable ledger: the SQLite file, its caps, racing processes and threads, bad files, the command line."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.data import acs
from core.data.spec import AcsSpec, CsvSpec, SyntheticSpec
from core.errors import InputError, LedgerUnavailable, PspError, Refused
from core.privacy.ledger import Ledger, ReleaseDetails
from core.privacy.ledger_rows import population_from_json, population_to_json
from core.privacy.ledger_store import SqliteStore, default_ledger_path, open_ledger
from core.privacy.population import Population

CA = AcsSpec(("CA",)).population()
MI = AcsSpec(("MI",)).population()
CA_MI = AcsSpec(("CA", "MI")).population()
UPLOAD = Population.file("ab" * 32, "mine.csv")
SYNTH = SyntheticSpec(n=500, d=2, sample_seed=None).population()
DATA = Path(__file__).parent / "data"
FIXTURES = {"CA": DATA / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv", "MI": DATA / "SYNTHETIC_psam_p26_MI_2018_1-Year.csv"}


def durable(path: Path, cap=(10.0, 1e-5)) -> Ledger:
    ledger = open_ledger(path)
    ledger.set_default_cap(cap)
    return ledger


@pytest.mark.parametrize("population", [CA, CA_MI, UPLOAD, SYNTH, SyntheticSpec(theta_norm=2.5).population()])
def test_a_population_round_trips_through_json(population):
    back = population_from_json(population_to_json(population))
    assert back == population and hash(back) == hash(population) and back.label == population.label
    assert back.parts() == population.parts() and {back: 1}[population] == 1


def test_entries_and_details_round_trip_and_survive_reopening(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    ledger = durable(path)
    first = ledger.spend(CA_MI, 1.5, 2e-6)
    details = ReleaseDetails("female", {"lambda_min": (0.5, 1e-7), "release": (0.5, 1e-6)}, "released", 0.25,
                             0.1, 0.4)
    ledger.record_outcome(first, details)
    ledger.spend(UPLOAD, 0.5, 0.0, details=ReleaseDetails("x0", {}, "bottom"))
    reopened = Ledger(store=SqliteStore(path))  # a new ledger (another process, another day) on the same file
    assert str(reopened) == str(path) and reopened.default_cap == (10.0, 1e-5)
    assert reopened.spent(CA) == reopened.spent(MI) == reopened.spent(CA_MI) == (1.5, 2e-6)
    assert reopened.remaining(CA) == (8.5, pytest.approx(8e-6))
    (entry,) = reopened.entries(MI)
    assert entry.uid == first.uid and entry.population == CA_MI and entry.population.label == CA_MI.label
    assert (entry.epsilon, entry.delta) == (1.5, 2e-6) and abs(entry.time - first.time) < 1e-3
    assert entry.details == details
    assert reopened.entries(UPLOAD)[0].details.outcome == "bottom"
    for _ in range(6):
        reopened.spend(CA, 1.0, 0.0)
    with pytest.raises(Refused, match="already spent"):
        ledger.spend(CA_MI, 3.0, 0.0)  # the first ledger sees what the second spent


def test_rounding_at_the_cap_is_summed_exactly(tmp_path):
    ledger = durable(tmp_path / "l.sqlite3", (1.0, 1e-5))
    for _ in range(10):
        ledger.spend(CA, 0.1, 1e-6)
    with pytest.raises(Refused):
        ledger.spend(CA, 1e-9, 0.0)


def test_caps_are_the_files_and_persist(tmp_path):
    path = tmp_path / "l.sqlite3"
    ledger = open_ledger(path)
    with pytest.raises(Refused, match="no cap is set"):  # a new file caps nothing: the curator must
        ledger.spend(CA, 0.1, 0.0)
    assert ledger.entries(CA) == ()
    ledger.set_cap(CA_MI, (2.0, 1e-6))
    ledger.spend(MI, 2.0, 0.0)
    with pytest.raises(Refused, match="no cap is set"):
        ledger.spend(UPLOAD, 0.1, 0.0)
    ledger.set_default_cap((5.0, 1e-5))
    again = open_ledger(path)
    assert again.cap(CA) == again.cap(MI) == (2.0, 1e-6) and again.cap(UPLOAD) == (5.0, 1e-5)
    again.set_cap(MI, (3.0, 1e-6))  # a curator may raise one part's cap again
    assert open_ledger(path).cap(MI) == (3.0, 1e-6) and ledger.remaining(MI) == (1.0, 1e-6)
    with pytest.raises(ValueError, match="kept in it by its curator"):
        Ledger((100.0, 1.0), store=SqliteStore(path))  # caps are not given by whoever opens the file


def _spend_in_process(path: str, start, count: int, out) -> None:
    ledger = open_ledger(path)
    start.wait()
    spent = 0
    for _ in range(count):
        try:
            ledger.spend(CA, 1.0, 0.0)
            spent += 1
        except Refused:
            pass
    out.put(spent)


@pytest.mark.slow
def test_two_processes_racing_past_the_cap_spend_exactly_what_fits(tmp_path):
    path = tmp_path / "l.sqlite3"
    durable(path, (7.0, 1e-5))
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_spend_in_process, args=(str(path), start, 6, out)) for _ in range(2)]
    for p in procs:
        p.start()
    counts = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sum(counts) == 7 and open_ledger(path).spent(CA) == (7.0, 0.0) and len(open_ledger(path).entries(CA)) == 7


def test_eight_threads_racing_past_the_cap_spend_exactly_what_fits(tmp_path, race):
    path = tmp_path / "l.sqlite3"
    durable(path, (5.0, 1e-5))
    outcomes = []

    def draw() -> None:
        ledger = open_ledger(path)  # each thread its own ledger: only the file's transaction serialises them
        try:
            ledger.spend(CA_MI, 1.0, 0.0)
            outcomes.append("spent")
        except Refused:
            outcomes.append("refused")

    race(draw)
    assert sorted(outcomes) == ["refused"] * 3 + ["spent"] * 5
    assert open_ledger(path).spent(MI) == (5.0, 0.0)


def test_a_corrupt_file_refuses_with_its_path(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    durable(path).spend(CA, 1.0, 0.0)
    path.write_bytes(os.urandom(8192))
    for wal in tmp_path.glob("ledger.sqlite3-*"):
        wal.unlink()
    with pytest.raises(LedgerUnavailable) as err:
        open_ledger(path)
    assert str(path) in str(err.value) and "not a readable SQLite database" in str(err.value)
    assert isinstance(err.value, PspError) and not isinstance(err.value, InputError | Refused)  # apart
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a ledger\n" * 100)
    with pytest.raises(LedgerUnavailable, match="garbage.sqlite3"):
        open_ledger(garbage)


def test_a_file_corrupted_after_opening_refuses_the_spend(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    ledger = durable(path)
    path.write_bytes(os.urandom(8192))
    for wal in tmp_path.glob("ledger.sqlite3-*"):
        wal.unlink()
    with pytest.raises(LedgerUnavailable, match=str(path)):
        ledger.spend(CA, 1.0, 0.0)


def test_an_unwritable_folder_refuses_with_its_path(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root (or similar): a read-only folder is still writable, nothing to test")
        with pytest.raises(LedgerUnavailable) as err:
            open_ledger(folder / "ledger.sqlite3")
        assert str(folder / "ledger.sqlite3") in str(err.value) and "cannot" in str(err.value)
        with pytest.raises(LedgerUnavailable, match="locked"):
            open_ledger(folder / "deeper" / "ledger.sqlite3")
    finally:
        folder.chmod(0o700)


def test_a_folder_in_place_of_the_file_or_a_file_in_place_of_its_folder_refuses(tmp_path):
    with pytest.raises(LedgerUnavailable, match="not a file"):
        open_ledger(tmp_path)
    (tmp_path / "plain").write_text("a file, not a folder")
    with pytest.raises(LedgerUnavailable, match="folder cannot be created") as err:
        open_ledger(tmp_path / "plain" / "ledger.sqlite3")  # unwritable as any user, root included
    assert str(tmp_path / "plain" / "ledger.sqlite3") in str(err.value)


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("PSP_LEDGER", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_ledger_path() == tmp_path / "private-single-parameter" / "ledger.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_ledger_path() == tmp_path / "home" / ".local" / "share" / "private-single-parameter" / \
        "ledger.sqlite3"
    monkeypatch.setenv("PSP_LEDGER", str(tmp_path / "mine.db"))
    assert default_ledger_path() == tmp_path / "mine.db"
    open_ledger().set_default_cap((1.0, 1e-6))
    assert (tmp_path / "mine.db").is_file()


def test_same_people_through_other_specs_share_the_durable_budget(tmp_path):
    path = tmp_path / "l.sqlite3"
    durable(path, (4.0, 1e-5))
    first = AcsSpec(("CA", "MI"), n=1000, sample_seed=1)
    open_ledger(path).spend(first.population(), 3.0, 1e-6)
    resampled = AcsSpec(("MI", "CA"), n=5000, sample_seed=2, with_replacement=True)
    with pytest.raises(Refused, match="already spent"):
        open_ledger(path).spend(resampled.population(), 2.0, 1e-6)
    with pytest.raises(Refused, match="already spent"):
        open_ledger(path).spend(AcsSpec(("CA",), n=10).population(), 2.0, 0.0)
    other_file = CsvSpec.from_bytes("a.csv", b"x,y\n1,2\n").population()
    open_ledger(path).spend(other_file, 4.0, 0.0)


# ------------------------------------------------------------------ the command line


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m core ARGS` with these environment variables, run in this process: an interpreter's start is all a
    subprocess would add (tests/test_fit_exact.py and the racing test below start real ones)."""
    out, err = io.StringIO(), io.StringIO()
    with _environ(env or {}), contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's refusals
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess([sys.executable, "-m", "core", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environ(changes: dict[str, str]):
    before = {key: os.environ.get(key) for key in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


ROOT = Path(__file__).resolve().parent.parent
SYNTH_RELEASE = ("release", "--synthetic", "--n", "2000", "--d", "2", "--sample-seed", "1", "--coordinate", "0",
                 "--epsilon", "6", "--delta", "1e-6")


def test_command_line_caps_charges_refuses_shows_and_exports(tmp_path):
    path = str(tmp_path / "curator" / "ledger.sqlite3")
    assert run("ledger", "set-cap", "--default", "--epsilon", "10", "--delta", "1e-5", "--ledger", path).returncode == 0
    first = run(*SYNTH_RELEASE, "--ledger", path)
    assert first.returncode == 0, first.stderr
    status = json.loads(first.stdout)["runs"][0]["status"] if "runs" in json.loads(first.stdout) else None
    second = run(*SYNTH_RELEASE, "--ledger", path)
    assert second.returncode == 2 and second.stdout == ""
    assert len(second.stderr.strip().splitlines()) == 1 and "refused" in second.stderr
    assert "(6, 1e-06) is already spent" in second.stderr
    shown = json.loads(run("ledger", "show", "--ledger", path).stdout)
    assert shown["default_cap"] == {"epsilon": 10.0, "delta": 1e-5}
    (row,) = shown["populations"]
    assert row["population"]["kind"] == "synthetic" and row["entries"] == 1
    assert row["spent"] == {"epsilon": 6.0, "delta": 1e-6} and row["remaining"]["epsilon"] == 4.0
    (entry,) = json.loads(run("ledger", "export", "--ledger", path).stdout)["entries"]
    assert entry["epsilon"] == 6.0 and entry["delta"] == 1e-6 and entry["coefficient"] == "x0"
    assert entry["outcome"] in ("released", "bottom", "fallback") and set(entry["stages"]) == {
        "lambda_min", "lambda_max", "release"}
    assert status is None or entry["outcome"] == status
    assert (entry["value"] is None) == (entry["outcome"] == "bottom")
    assert entry["time"].endswith("+00:00")
    rows = list(csv.DictReader(io.StringIO(run("ledger", "export", "--ledger", path, "--format", "csv").stdout)))
    assert len(rows) == 1 and rows[0]["uid"] == entry["uid"] and float(rows[0]["epsilon"]) == 6.0
    unledgered = run(*SYNTH_RELEASE)  # without --ledger nothing is charged
    assert unledgered.returncode == 0 and len(json.loads(run("ledger", "export", "--ledger", path).stdout)
                                              ["entries"]) == 1


def test_command_line_default_path_and_a_corrupt_file(tmp_path):
    env = {"PSP_LEDGER": str(tmp_path / "env.sqlite3")}
    assert run("ledger", "set-cap", "--default", "--epsilon", "6", "--delta", "1e-5", env=env).returncode == 0
    assert run(*SYNTH_RELEASE, "--ledger", env=env).returncode == 0
    assert json.loads(run("ledger", "show", env=env).stdout)["populations"][0]["spent"]["epsilon"] == 6.0
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"\x00garbage" * 512)
    proc = run(*SYNTH_RELEASE, "--ledger", str(bad))
    assert proc.returncode == 2 and str(bad) in proc.stderr and "not a readable SQLite database" in proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    # A new file starts with the default cap every surface gives it (core.privacy.charge.default_cap), as the app's
    # does.
    fresh = str(tmp_path / "new.sqlite3")
    assert run(*SYNTH_RELEASE, "--ledger", fresh).returncode == 0
    assert json.loads(run("ledger", "show", "--ledger", fresh).stdout)["default_cap"] == {"epsilon": 10.0,
                                                                                           "delta": 1e-5}
    closed = run(*SYNTH_RELEASE, "--ledger", str(tmp_path / "closed.sqlite3"), env={"PSP_CAP_EPSILON": "0"})
    assert closed.returncode == 2 and "refused" in closed.stderr  # a deployment's cap of 0 refuses everything


def census_root(tmp_path: Path) -> str:
    """A census folder under tmp_path with the SYNTHETIC CA and MI person files where folktables reads them."""
    for state, src in FIXTURES.items():
        dst = acs.census_path(tmp_path / "census", state)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    return str(tmp_path / "census")


def test_command_line_census_charged_through_one_spec_refused_through_another(tmp_path):
    census = census_root(tmp_path)
    path = str(tmp_path / "ledger.sqlite3")
    assert run("ledger", "set-cap", "--state", "CA", "--state", "MI", "--epsilon", "5", "--delta", "1e-5",
               "--ledger", path).returncode == 0
    base = ("release", "--acs-root", census, "--coordinate", "female", "--epsilon", "4",
            "--delta", "1e-6", "--ledger", path)
    first = run(*base, "--state", "CA", "--state", "MI", "--n", "300", "--sample-seed", "2")
    assert first.returncode == 0, first.stderr
    other = run(*base, "--state", "MI", "--n", "150", "--sample-seed", "7")
    assert other.returncode == 2 and "refused" in other.stderr and "person file of MI" in other.stderr
    shown = json.loads(run("ledger", "show", "--ledger", path).stdout)
    spent = {tuple(r["population"]["key"][0]): r["spent"]["epsilon"] for r in shown["populations"]}
    assert spent == {("CA",): 4.0, ("MI",): 4.0}


def test_command_line_ledger_and_repeat(tmp_path):
    proc = run(*SYNTH_RELEASE, "--repeat", "2", "--ledger", str(tmp_path / "l.sqlite3"))
    assert proc.returncode == 2 and "--repeat" in proc.stderr


def test_a_response_bound_the_fit_cannot_certify_is_refused_before_any_charge(tmp_path):
    """Decided from n, d and the declared bound alone: exit 2, one line naming the option, nothing charged."""
    path = str(tmp_path / "ledger.sqlite3")
    assert run("ledger", "set-cap", "--default", "--epsilon", "10", "--delta", "1e-5", "--ledger", path).returncode == 0
    refused = run(*SYNTH_RELEASE, "--response-bound", "1e15", "--ledger", path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "lower --response-bound" in refused.stderr
    assert json.loads(run("ledger", "show", "--ledger", path).stdout)["populations"] == []


def test_a_sample_with_replacement_is_charged_per_person(tmp_path):
    """k = 4 rows of one person (n = 198 of CA's 200, seed 3): a release at (1, 1e-7) costs that person
    (4, 1e-7 (1 + e + e^2 + e^3)) = (4, 3.12e-6), which passes a cap of (5, 1e-6): refused, nothing charged. Under a
    cap of (9, 1e-5) it is charged (4, 3.12e-6), twice, and a third time refused: the total per person never passes
    the cap."""
    path = str(tmp_path / "ledger.sqlite3")
    base = ("release", "--acs-root", census_root(tmp_path), "--state", "CA", "--n", "198", "--with-replacement",
            "--sample-seed", "3", "--coordinate", "female", "--epsilon", "1", "--delta", "1e-7", "--ledger", path)
    assert run("ledger", "set-cap", "--state", "CA", "--epsilon", "5", "--delta", "1e-6",
               "--ledger", path).returncode == 0
    refused = run(*base)
    assert refused.returncode == 2 and "refused" in refused.stderr, refused.stderr
    assert json.loads(run("ledger", "export", "--ledger", path).stdout)["entries"] == []
    assert run("ledger", "set-cap", "--state", "CA", "--epsilon", "9", "--delta", "1e-5",
               "--ledger", path).returncode == 0
    delta_k = 1e-7 * sum(math.exp(j) for j in range(4))
    for _ in range(2):
        first = run(*base)
        assert first.returncode == 0, first.stderr
        unit = json.loads(first.stdout)["privacy_unit"]
        assert unit["max_rows_per_person"] == 4 and unit["delta_per_person"] == pytest.approx(delta_k, rel=1e-12)
    assert run(*base).returncode == 2
    entries = json.loads(run("ledger", "export", "--ledger", path).stdout)["entries"]
    assert [(e["epsilon"], e["delta"]) for e in entries] == [(4.0, pytest.approx(delta_k, rel=1e-12))] * 2


def test_a_seeded_release_is_never_charged(tmp_path):
    path = str(tmp_path / "ledger.sqlite3")
    seeded = run(*SYNTH_RELEASE, "--seed", "7", "--ledger", path)
    assert seeded.returncode == 2 and seeded.stdout == ""
    assert len(seeded.stderr.strip().splitlines()) == 1 and "not private" in seeded.stderr
    assert "drop --seed or --ledger" in seeded.stderr
    assert not Path(path).exists()  # refused before the ledger was even opened


def test_the_ca_people_are_charged_once_whichever_route_they_come_by(tmp_path):
    """Cap of CA: epsilon 1. Charged through the census folder; then refused through the person file itself, the
    file with a trailing newline and the file with an unused column renamed (keyed by its people, not its bytes)."""
    path = str(tmp_path / "ledger.sqlite3")
    assert run("ledger", "set-cap", "--state", "CA", "--epsilon", "1", "--delta", "1e-5",
               "--ledger", path).returncode == 0
    common = ("--coordinate", "female", "--epsilon", "1", "--delta", "1e-7", "--ledger", path)
    first = run("release", "--acs-root", census_root(tmp_path), "--state", "CA", *common)
    assert first.returncode == 0, first.stderr
    content = FIXTURES["CA"].read_bytes()
    header, rest = content.split(b"\n", 1)
    for i, variant in enumerate([content, content + b"\n", header.replace(b"DIVISION", b"DIV") + b"\n" + rest]):
        f = tmp_path / f"copy{i}.csv"
        f.write_bytes(variant)
        again = run("release", "--pums", str(f), *common)
        assert again.returncode == 2 and "refused" in again.stderr, (i, again.stderr)
    (row,) = json.loads(run("ledger", "show", "--ledger", path).stdout)["populations"]
    assert row["population"]["key"][0] == ["CA"] and row["spent"]["epsilon"] == 1.0 and row["entries"] == 1
