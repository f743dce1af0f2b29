"""The PostgreSQL ledger (core.privacy.ledger_pg) on a real server (tests/pg.py): the SQLite ledger's own tests run on
it (tests/test_ledger.py, test_ledger_durable.py, test_ledger_machine.py, imported, not copied), processes racing
for the last ε of a cap and for one certification, `ledger move`, and databases that cannot be used."""

from __future__ import annotations

import contextlib
import inspect
import json
import multiprocessing
import sqlite3
import threading
import uuid
from pathlib import Path

import pg
import pytest
import test_ledger as memory_tests
import test_ledger_durable as durable_tests
import test_ledger_machine as machine_tests
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from pg import empty, finish_in_turns, psycopg, spend_in_turns

from core.data.spec import AcsSpec
from core.errors import LedgerUnavailable, Refused
from core.mechanisms.pipeline import prepare_spec
from core.privacy.access import AccessError
from core.privacy.charge import open_charged
from core.privacy.ledger import PLAN_PARTS, Ledger, ReleaseDetails
from core.privacy.ledger_pg import PostgresStore
from core.privacy.ledger_rows import part_scope
from core.privacy.ledger_store import default_ledger_path, open_ledger
from core.privacy.population import Population

databases, pg_server, pg_url = pg.databases, pg.pg_server, pg.pg_url  # its fixtures, by their names
CA, MI, CA_MI = durable_tests.CA, durable_tests.MI, durable_tests.CA_MI
UPLOAD = durable_tests.UPLOAD
RESAVED = Population.file("f" * 64, "resaved.csv", earlier="a" * 64)
SAMPLE = Population.census_sample(["CA", "MI"], 2021, "1-Year", 100)
run = durable_tests.run
PLAN = {part: f"the digest of the {part}" for part in PLAN_PARTS}
NOWHERE = "postgresql://psp@127.0.0.1:1/ledger"  # port 1: nothing listens there


def _one_sentence(text: str) -> bool:
    return len(text.strip().splitlines()) == 1 and "Traceback" not in text


def test_a_postgresql_url_opens_a_shared_ledger_that_charges_refuses_and_remembers(pg_url, monkeypatch):
    """The quick lane's one PostgreSQL test: the selection by URL (--ledger or PSP_LEDGER, either scheme), the cap
    rule, and a second server's handle seeing the first's spends."""
    ledger = open_ledger(pg_url)
    assert str(ledger) == pg_url and ledger.default_cap is None  # a new database caps nothing
    ledger.set_default_cap((1.0, 1e-5))
    ledger.set_cap(CA_MI, (0.75, 1e-6))
    first = ledger.spend(CA_MI, 0.5, 1e-7)
    monkeypatch.setenv("PSP_LEDGER", pg_url.replace("postgresql://", "postgres://", 1))
    assert default_ledger_path() == pg_url.replace("postgresql://", "postgres://", 1)  # kept as given, not a Path
    other = open_ledger()  # another server, through PSP_LEDGER
    assert other.spent(MI) == (0.5, 1e-7) and [e.uid for e in other.entries(CA)] == [first.uid]
    with pytest.raises(Refused, match=r"\(0.5, 1e-07\) is already spent"):
        other.spend(MI, 0.5, 0.0)
    other.spend(MI, 0.25, 0.0)
    assert ledger.spent(MI) == (0.75, 1e-7) and ledger.remaining(CA) == (0.25, pytest.approx(9e-7))
    assert ledger.cap(UPLOAD) == (1.0, 1e-5) and ledger.spent(UPLOAD) == (0.0, 0.0)


# ------------------------------------------------------------------ the SQLite ledger's tests, on PostgreSQL

MEMORY_TESTS = ("test_default_cap_and_caps_per_population", "test_refusal_exactly_at_the_boundary",
                "test_the_refusal_says_cost_spent_and_cap", "test_two_populations_are_independent",
                "test_one_budget_for_the_same_people_through_different_specs",
                "test_states_share_their_people_with_every_union", "test_bad_costs_and_caps_are_refused")
DURABLE_TESTS = ("test_entries_and_details_round_trip_and_survive_reopening",
                 "test_rounding_at_the_cap_is_summed_exactly", "test_caps_are_the_files_and_persist",
                 "test_eight_threads_racing_past_the_cap_spend_exactly_what_fits",
                 "test_same_people_through_other_specs_share_the_durable_budget",
                 "test_command_line_census_charged_through_one_spec_refused_through_another",
                 "test_a_response_bound_the_fit_cannot_certify_is_refused_before_any_charge",
                 "test_a_sample_with_replacement_is_charged_per_person",
                 "test_the_ca_people_are_charged_once_whichever_route_they_come_by")


def _call(test, request, **given):
    """Run an imported test function with its fixtures: those given, else pytest's."""
    names = inspect.signature(test).parameters
    test(**{name: given[name] if name in given else request.getfixturevalue(name) for name in names})


@pytest.mark.slow
@pytest.mark.parametrize("name", MEMORY_TESTS)
def test_the_ledger_tests_on_postgresql(name, databases, monkeypatch, request):
    """tests/test_ledger.py's tests of the cap rule, each ledger a new database with the caps they give (those that
    keep records in memory, copy a ledger or race a slow memory store are the memory store's own)."""
    made = []

    def ledger(default_cap, caps=None):
        made.append(open_ledger(databases()))
        made[-1].set_default_cap(default_cap)
        for population, cap in (caps or {}).items():
            made[-1].set_cap(population, cap)
        return made[-1]

    monkeypatch.setattr(memory_tests, "Ledger", ledger)
    _call(getattr(memory_tests, name), request)
    assert made and all(str(book).startswith("postgresql://") for book in made)


class Folder:
    """A test's tmp_path whose ledger files are databases: folder / "name.sqlite3" is the URL of a new database (the
    same for the same name), any other name a path in the real folder (census files, copies of files)."""

    def __init__(self, real: Path, new) -> None:
        self.real, self.new, self.urls = real, new, {}

    def __truediv__(self, name: str):
        if not name.endswith(".sqlite3"):
            return self.real / name
        if name not in self.urls:
            self.urls[name] = self.new()
        return self.urls[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", DURABLE_TESTS)
def test_the_durable_ledger_tests_on_postgresql(name, databases, tmp_path, monkeypatch, request):
    """tests/test_ledger_durable.py's tests of the durable ledger and the command line, with a database wherever
    they name a ledger file (those of a file's corruption, folders and paths are SQLite's own)."""
    folder = Folder(tmp_path, databases)
    monkeypatch.setattr(durable_tests, "SqliteStore", PostgresStore)  # "another process on the same file"
    _call(getattr(durable_tests, name), request, tmp_path=folder)
    assert folder.urls and all(url.startswith("postgresql://") for url in folder.urls.values())


class PostgresMachine(machine_tests.Machine):
    """tests/test_ledger_machine.py's certification machine over one database, emptied for every example; "reopen"
    opens the URL again."""

    url = ""

    def __init__(self) -> None:
        super().__init__()
        empty(self.url)
        self.path = self.url
        self.ledger = open_charged(self.url, machine_tests.CAP)


@pytest.mark.slow
def test_the_certification_machine_on_postgresql(pg_url, monkeypatch):
    problems = {name: prepare_spec(spec.load(), model, spec) for name, (spec, model) in machine_tests.SPECS.items()}
    monkeypatch.setattr(PostgresMachine, "problems", problems)
    monkeypatch.setattr(PostgresMachine, "url", pg_url)
    open_ledger(pg_url)  # the schema, which each example empties
    run_state_machine_as_test(PostgresMachine, settings=settings(machine_tests.Machine.TestCase.settings,
                                                                 max_examples=40))


@pytest.mark.slow
def test_an_e_mail_signs_in_as_one_analyst_in_every_store(pg_url, tmp_path):
    """Adding an analyst with an e-mail another analyst signs in with is refused alike by the memory, SQLite and
    PostgreSQL stores, and the first keeps their record, their share and what they spent (SQLite's INSERT OR REPLACE
    once deleted them and gave the e-mail a fresh share)."""
    for book in (Ledger((10.0, 1e-5)), open_ledger(tmp_path / "l.sqlite3"), open_ledger(pg_url)):
        book.set_default_cap((10.0, 1e-5))
        book.add_analyst("alice", (1.0, 1e-6), email="alice@example.org")
        book.spend(CA, 1.0, 0.0, spender=book.analyst_spender("alice"))
        with pytest.raises(AccessError, match="the e-mail alice@example.org signs in as the analyst alice already"):
            book.add_analyst("alice2", (1.0, 1e-6), email=" Alice@Example.org")
        with pytest.raises(AccessError, match="an analyst named alice exists already"):
            book.add_analyst("alice", (1.0, 1e-6), email="other@example.org")
        assert [a.name for a in book.analysts()] == ["alice"] and len(book.analyst_changes()) == 1
        assert book.by_email("alice@example.org").name == "alice"
        assert book.remaining(CA, book.analyst_spender("alice")) == (0.0, 1e-6)


@pytest.mark.slow
def test_a_change_to_an_analyst_never_writes_over_a_revocation_made_meanwhile(pg_url, tmp_path):
    """One curator changes mallory's share while another revokes her: the revocation waits for the change, then
    applies to what it wrote, in every store; she ends revoked, with the new share (a read outside the change's
    transaction once wrote the old record back over the revocation)."""
    memory, places = Ledger((10.0, 1e-5)), (tmp_path / "l.sqlite3", pg_url)
    for book, other in ((memory, memory), *((open_ledger(w), open_ledger(w)) for w in places)):
        book.add_analyst("mallory", (1.0, 1e-6), email="m@example.org")
        inside, go = threading.Event(), threading.Event()
        change = other._store.change_analyst

        def held(name, edit, by, change=change, inside=inside, go=go):
            def slow(found):  # the record is read: the other curator revokes now
                inside.set()
                go.wait(10)
                return edit(found)
            return change(name, slow, by)

        other._store.change_analyst = held
        changer = threading.Thread(target=other.change_analyst, args=("mallory", (2.0, 1e-6)))
        changer.start()
        assert inside.wait(10)
        revoker = threading.Thread(target=book.revoke_analyst, args=("mallory",))
        revoker.start()
        revoker.join(0.3)
        assert revoker.is_alive()  # it waits for the change
        go.set()
        changer.join(10)
        revoker.join(10)
        assert not changer.is_alive() and not revoker.is_alive()
        (mallory,) = book.analysts()
        assert mallory.revoked and mallory.share == (2.0, 1e-6), mallory
        assert [c.change.split()[0] for c in book.analyst_changes()] == ["added", "share", "revoked"]
        with pytest.raises(AccessError, match="revoked"):
            book.analyst_spender("mallory")


# ------------------------------------------------------------------ servers racing


def _race(target, args_of, k: int, results: int) -> list:
    """Run target(*args_of(barrier, queue)) in k spawned processes released together; their results, k each."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Barrier(k), ctx.Queue()
    procs = [ctx.Process(target=target, args=args_of(start, out)) for _ in range(k)]
    for p in procs:
        p.start()
    found = [out.get(timeout=120) for _ in range(results)]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return found


@pytest.mark.slow
def test_two_servers_racing_for_the_last_epsilon_spend_exactly_the_cap(pg_url):
    """Ten people with 0.5 of a cap of 1 left; two processes, each with its own connection, charge 0.5 on each at
    once: one is charged, the other refused, and exactly the cap is spent."""
    ledger = open_ledger(pg_url)
    ledger.set_default_cap((1.0, 1e-5))
    people = [Population.file(f"{i:064x}", f"race{i}.csv") for i in range(10)]
    for p in people:
        ledger.spend(p, 0.5, 0.0)
    found = _race(spend_in_turns, lambda start, out: (pg_url, people, (0.5, 0.0), start, out), 2, 2 * len(people))
    outcomes = {p.key: sorted(o for key, o in found if key == p.key) for p in people}
    assert all(o == ["refused", "spent"] for o in outcomes.values()), outcomes
    assert all(ledger.spent(p) == (1.0, 0.0) and len(ledger.entries(p)) == 2 for p in people)


@pytest.mark.slow
def test_four_servers_finishing_one_certification_release_once(pg_url):
    """Five open certifications; four processes finish each at once: one release each, the three others refused,
    and the ledger holds the first charge and that one release."""
    ledger = open_ledger(pg_url)
    ledger.set_default_cap((10.0, 1e-5))
    turns = []
    for i in range(5):
        people = Population.file(f"{i:064x}", f"certified{i}.csv")
        _, opened = ledger.open_certification(people, 1.0, 1e-7, PLAN, {"round": i})
        ledger.keep_certificates(opened.uid, "{}")
        turns.append((opened.uid, people, (0.5, 1e-7), PLAN))
    found = _race(finish_in_turns, lambda start, out: (pg_url, turns, start, out), 4, 4 * len(turns))
    for uid, people, _, _ in turns:
        released = [entry for u, entry in found if u == uid and entry is not None]
        assert len(released) == 1 and sum(u == uid for u, _ in found) == 4
        finished = ledger.certification(uid)
        assert finished.state == "finished" and finished.release_entry == released[0]
        assert ledger.spent(people) == (1.5, 2e-7) and len(ledger.entries(people)) == 2


@pytest.mark.slow
def test_a_spend_waits_for_the_lock_of_its_people_and_refuses_past_the_timeout(pg_url):
    """Another server holding the lock row of CA: a spend on CA and MI waits for it, and after the timeout is
    refused in one sentence, charging nothing; a spend on other people does not wait."""
    ledger = Ledger(store=PostgresStore(pg_url, timeout=1.0))
    ledger.set_default_cap((10.0, 1e-5))
    with pg.connect(pg_url) as holder:
        holder.execute("INSERT INTO locks (scope) VALUES (%s)", (part_scope(CA),))
        with pytest.raises(LedgerUnavailable, match="held its lock for longer than the timeout") as err:
            ledger.spend(CA_MI, 1.0, 0.0)
        assert _one_sentence(str(err.value)) and "PSP_LEDGER" in str(err.value)
        ledger.spend(UPLOAD, 1.0, 0.0)
    assert ledger.spent(CA_MI) == ledger.spent(MI) == (0.0, 0.0) and ledger.entries(CA_MI) == ()
    ledger.spend(CA_MI, 1.0, 0.0)  # the holder's transaction ended: its lock with it
    assert ledger.spent(CA) == (1.0, 0.0)


# ------------------------------------------------------------------ moving a ledger


def _fill(path: str) -> str:
    """A ledger file with caps, two analysts (one signing in by e-mail, one with a key) and a change, spends by two
    spenders on shared people, release details, an open and a finished certification, and one release of the command
    line; bob's access key."""
    book = open_ledger(path)
    book.set_default_cap((10.0, 1e-5))
    book.set_cap(CA_MI, (4.0, 1e-5))
    book.add_analyst("alice", (2.0, 1e-6), email="alice@example.org")
    key = book.add_analyst("bob", (1.0, 1e-6))
    book.change_analyst("alice", share=(3.0, 1e-6))
    alice = book.analyst_spender("alice")
    book.spend(CA_MI, 1.0, 1e-6, details=ReleaseDetails("female", {"release": (1.0, 1e-6)}, "released", 0.25, 0.1,
                                                         0.4))
    book.spend(CA, 1.5, 0.0, spender=alice)
    book.spend(UPLOAD, 0.25, 0.0, details=ReleaseDetails("x0", {}, "bottom"))
    for people in RESAVED, SAMPLE:  # parts whose scopes sort otherwise than they were charged
        book.spend(people, 0.5, 0.0)
    _, kept = book.open_certification(MI, 0.5, 1e-7, PLAN, {"words": "kept open"}, spender=alice)
    book.keep_certificates(kept.uid, '{"lambda_min": 1}')
    _, done = book.open_certification(UPLOAD, 0.5, 1e-7, PLAN, {"words": "finished"})
    book.keep_certificates(done.uid, "{}")
    book.finish_certification(done.uid, UPLOAD, 0.5, 1e-7, PLAN)
    assert run(*durable_tests.SYNTH_RELEASE, "--ledger", path).returncode == 0
    return key


def _views(where: str) -> dict:
    """What `ledger show`, `ledger export` and `ledger analyst list` print of a ledger, but its name."""
    return {view: json.loads(run("ledger", *view.split(), "--ledger", where).stdout) | {"ledger": None}
            for view in ("show", "export", "analyst list")}


@pytest.mark.slow
def test_ledger_move_keeps_every_entry_share_and_spender_and_refuses_a_full_target(pg_url, tmp_path):
    path = str(tmp_path / "ledger.sqlite3")
    key = _fill(path)
    before = _views(path)
    moved = run("ledger", "move", "--ledger", path, "--to", pg_url)
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout) == {"ledger": pg_url, "moved_from": path, "entries": 9, "caps": 3,
                                        "analysts": 2, "analyst_changes": 3, "certifications": 2,
                                        "checked": "ledger show, ledger export and ledger analyst list agree"}
    after = _views(pg_url)
    assert after == before and _views(path) == before  # the file is only read
    shown = after["show"]["populations"]
    assert {r["population"]["description"].split()[-1]: r["spent_by"] for r in shown if r["population"]["kind"] ==
            "acs"} == {"CA": {"curator": {"epsilon": 1.0, "delta": 1e-6}, "alice": {"epsilon": 1.5, "delta": 0.0}},
                       "MI": {"curator": {"epsilon": 1.0, "delta": 1e-6}, "alice": {"epsilon": 0.5, "delta": 1e-7}}}
    moved_book = open_ledger(pg_url)
    with pytest.raises(Refused, match="already spent"):  # the moved parts are the keys its new charges look up
        moved_book.spend(AcsSpec(("CA",)).population(), 2.0, 0.0)
    with pytest.raises(Refused, match="alice has spent"):  # and alice's share is what it was
        moved_book.spend(MI, 2.6, 0.0, spender=moved_book.analyst_spender("alice"))
    assert moved_book.sign_in(key, "a browser").name == "bob"  # his key's salt and hash came along
    again = run("ledger", "move", "--ledger", path, "--to", pg_url)
    assert again.returncode == 2 and again.stdout == "" and _one_sentence(again.stderr)
    assert "is not empty (it holds 9 entries, 3 caps and 2 analysts)" in again.stderr and "--to" in again.stderr
    assert _views(pg_url) == before  # nothing was added twice


@pytest.mark.slow
def test_ledger_move_reads_one_state_of_the_file_and_refuses_when_it_changed_meanwhile(pg_url, tmp_path,
                                                                                     monkeypatch):
    """A server left running spends on the file while the move copies it: the copy is of one state (the spend is not
    half in it), and the move is refused in one sentence, naming what to do."""
    path = str(tmp_path / "ledger.sqlite3")
    open_charged(path, (10.0, 1e-5)).add_analyst("mallory", (5.0, 1e-6), email="m@example.org")
    copy = PostgresStore.copy_from

    def with_a_spend_meanwhile(self, source):
        open_ledger(path).revoke_analyst("mallory")
        open_ledger(path).spend(CA, 1.0, 0.0)
        return copy(self, source)

    monkeypatch.setattr(PostgresStore, "copy_from", with_a_spend_meanwhile)
    proc = run("ledger", "move", "--ledger", path, "--to", pg_url)
    assert proc.returncode == 2 and proc.stdout == "" and _one_sentence(proc.stderr), proc.stderr
    assert "changed during the move" in proc.stderr and "stop every server" in proc.stderr
    moved = open_ledger(pg_url)
    assert moved.log() == [] and not moved.analysts()[0].revoked  # the state the move read, whole


@pytest.mark.slow
def test_ledger_move_needs_a_file_of_todays_schema_and_a_url(pg_url, tmp_path):
    older = tmp_path / "older.sqlite3"
    open_ledger(older).set_default_cap((10.0, 1e-5))
    with contextlib.closing(sqlite3.connect(older)) as db, db:
        db.execute("UPDATE schema SET version = 3")
    for args, words in ((("--ledger", str(tmp_path / "none.sqlite3"), "--to", pg_url), "there is no ledger file"),
                        (("--ledger", pg_url, "--to", pg_url), "name the file with --ledger"),
                        (("--ledger", str(older), "--to", str(tmp_path / "y.sqlite3")), "--to takes a PostgreSQL URL"),
                        (("--ledger", str(older), "--to", pg_url), "has schema version 3: bring it to version 4")):
        proc = run("ledger", "move", *args)
        assert proc.returncode == 2 and _one_sentence(proc.stderr) and words in proc.stderr, proc.stderr
    assert not (tmp_path / "none.sqlite3").exists() and not (tmp_path / "y.sqlite3").exists()
    with contextlib.closing(sqlite3.connect(older)) as db:  # read, never brought up to date
        assert db.execute("SELECT version FROM schema").fetchall() == [(3,)]
    assert open_ledger(pg_url).log() == []


# ------------------------------------------------------------------ databases that cannot be used


@pytest.mark.slow
def test_an_unreachable_server_refuses_in_one_sentence_and_nothing_is_charged(pg_url, pg_server):
    with pytest.raises(LedgerUnavailable) as err:
        open_ledger(NOWHERE)
    text = str(err.value)
    assert _one_sentence(text) and "PSP_LEDGER" in text and NOWHERE in text and "cannot be reached" in text
    for proc in (run(*durable_tests.SYNTH_RELEASE, "--ledger", NOWHERE),
                 run("ledger", "show", env={"PSP_LEDGER": NOWHERE})):
        assert proc.returncode == 2 and proc.stdout == "" and _one_sentence(proc.stderr)
        assert "cannot be reached" in proc.stderr and "PSP_LEDGER" in proc.stderr
    secret = NOWHERE.replace("psp@", "psp:hunter2@")
    with pytest.raises(LedgerUnavailable) as err:
        open_ledger(secret)
    assert "hunter2" not in str(err.value) and "psp:***@127.0.0.1:1" in str(err.value)
    ledger = open_ledger(pg_url)  # reachable when opened, then not
    ledger.set_default_cap((10.0, 1e-5))
    name = pg_url.split("?")[0].rsplit("/", 1)[1]
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as db:
        db.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        with pytest.raises(LedgerUnavailable, match="cannot be reached") as err:
            ledger.spend(CA, 1.0, 0.0)
        assert _one_sentence(str(err.value))
        db.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
    assert ledger.spent(CA) == (0.0, 0.0) and ledger.entries(CA) == ()


MISTYPED = ("POSTGRESQL://app:s3cret@db.example/ledger", "postgresql+psycopg://app:s3cret@db.example/ledger",
            " postgresql://app:s3cret@db.example/ledger")
UNREADABLE = ("postgresql://psp:s3c%zzret@127.0.0.1:1/ledger", "postgresql://psp:s3cret@[::1/ledger",
              "postgresql://psp:s3cret@127.0.0.1:99999/ledger")


def test_a_url_not_of_postgresql_or_not_readable_is_refused_without_its_password(tmp_path, monkeypatch):
    """A URL of another scheme, in capitals or after a space is refused, never taken for a file's path (which would
    be a new ledger with a budget of its own); a URL that cannot be read is refused in one sentence; neither message
    holds the password, escaped or not."""
    monkeypatch.chdir(tmp_path)
    for url in MISTYPED + UNREADABLE:
        with pytest.raises(LedgerUnavailable) as err:
            open_ledger(url)
        text = str(err.value)
        assert _one_sentence(text) and "s3c" not in text and "PSP_LEDGER" in text, text
        for proc in (run("ledger", "show", "--ledger", url), run("ledger", "show", env={"PSP_LEDGER": url})):
            assert proc.returncode == 2 and proc.stdout == "" and _one_sentence(proc.stderr), proc.stderr
            assert "s3c" not in proc.stderr
    for url in MISTYPED:
        proc = run("ledger", "move", "--ledger", str(tmp_path / "l.sqlite3"), "--to", url)
        assert proc.returncode == 2 and _one_sentence(proc.stderr) and "--to" in proc.stderr, proc.stderr
        assert "s3c" not in proc.stderr
    assert list(tmp_path.iterdir()) == [] and not (durable_tests.ROOT / "POSTGRESQL:").exists()


@pytest.mark.slow
def test_servers_of_other_roles_share_the_ledger_or_are_refused_never_given_their_own(pg_url):
    """A role with a schema of its own name (first on PostgreSQL's default search_path) still reads and charges the
    ledger's schema: with the rights granted it is refused what the cap no longer holds; without them it is refused
    the ledger, never given a new one; and a ledger's tables found in another schema are refused, not left behind."""
    curator = open_charged(pg_url, (1.0, 1e-5))
    curator.spend(CA, 1.0, 0.0)
    role = f"server_{uuid.uuid4().hex[:8]}"
    _sql(pg_url, f"CREATE ROLE {role} LOGIN", f"CREATE SCHEMA {role} AUTHORIZATION {role}")
    second = pg_url.replace("postgres:@", f"{role}:@")
    with pytest.raises(LedgerUnavailable, match="its user may not use the schema psp_ledger") as err:
        open_charged(second, (1.0, 1e-5))
    assert _one_sentence(str(err.value))
    _sql(pg_url, f"GRANT USAGE ON SCHEMA psp_ledger TO {role}",
         f"GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA psp_ledger TO {role}")
    server = open_charged(second, (1.0, 1e-5))
    assert server.spent(CA) == (1.0, 0.0)
    with pytest.raises(Refused, match="already spent"):
        server.spend(CA, 0.5, 0.0)
    with pg.connect(pg_url, autocommit=True) as db:
        assert db.execute(f"SELECT count(*) FROM information_schema.tables WHERE table_schema = '{role}'").fetchone() \
            == (0,)
        for table in pg.TABLES + ("schema",):
            db.execute(f"ALTER TABLE psp_ledger.{table} SET SCHEMA public")
        db.execute("DROP SCHEMA psp_ledger")
    with pytest.raises(LedgerUnavailable, match="the schema public holds a ledger's tables") as err:
        open_ledger(pg_url)
    assert _one_sentence(str(err.value))
    with psycopg.connect(pg_url) as db:  # nothing was created: the tables stay where they are, with their entry
        assert db.execute("SELECT count(*) FROM public.entries").fetchone() == (1,)
        assert not db.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'psp_ledger'").fetchone()


def _sql(url: str, *statements: str) -> None:
    with pg.connect(url, autocommit=True) as db:
        for statement in statements:
            db.execute(statement)


@pytest.mark.slow
def test_an_unknown_schema_version_or_altered_tables_are_refused_and_left_as_they_are(databases):
    cases = {
        "UPDATE schema SET version = 2": "its schema version is 2, and this program reads version 1 only",
        "INSERT INTO schema (version) VALUES (1)": "its schema table has 2 rows where a ledger has one",
        "ALTER TABLE entries DROP COLUMN reason": "its tables and columns are not those of schema version 1",
        "DROP TABLE schema": "its tables have no schema version",
        "CREATE FUNCTION nothing() RETURNS trigger AS 'BEGIN RETURN NEW; END' LANGUAGE plpgsql; CREATE TRIGGER "
        "quiet BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION nothing()": "a trigger is set on its tables",
    }
    for change, words in cases.items():
        url = databases()
        open_ledger(url).set_default_cap((10.0, 1e-5))
        _sql(url, change)
        with pytest.raises(LedgerUnavailable) as err:
            open_ledger(url)
        assert words in str(err.value) and _one_sentence(str(err.value)) and "PSP_LEDGER" in str(err.value)
        with pg.connect(url) as db:  # untouched: the caps are there, the change is still there
            assert db.execute("SELECT cap_epsilon FROM caps").fetchall() == [(10.0,)]
            if "version = 2" in change:
                assert db.execute("SELECT version FROM schema").fetchall() == [(2,)]
    other = databases()
    _sql(other, "CREATE SCHEMA psp_ledger", "CREATE TABLE entries (note TEXT)")  # a schema of something else
    with pytest.raises(LedgerUnavailable, match="its tables have no schema version"):
        open_ledger(other)
