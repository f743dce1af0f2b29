"""Who may spend (core.privacy.access, the ledger's analysts): tried as a stranger with the link, a guesser of keys, an
analyst past their share, a revoked analyst with a session still open, and two analysts racing for the last of a
cap from separate processes."""

from __future__ import annotations

import json
import logging
import math
import multiprocessing
import time

import pytest

from core.cli import main
from core.data.spec import SyntheticSpec
from core.errors import Refused
from core.privacy import access
from core.privacy.access import (
    CURATOR,
    FREE_TRIES,
    LOCAL,
    MAX_WAIT,
    RELAYED,
    WINDOW,
    AccessError,
    Spender,
    key_id,
    loopback,
    refusal,
    source,
    too_many,
    trusted_proxies,
    wait,
)
from core.privacy.charge import open_charged
from core.privacy.ledger import Ledger
from core.privacy.ledger_store import open_ledger

PEOPLE = SyntheticSpec("robust", 2_000, 3, 1.0, 1.0, 5).population()


@pytest.fixture
def path(tmp_path):
    return tmp_path / "ledger.sqlite3"


@pytest.fixture
def book(path):
    return open_charged(path, (10.0, 1e-5))


def file_bytes(path) -> bytes:
    """The ledger file and its write-ahead log, as bytes on disk."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_the_rule_of_who_may_spend():
    ana = Spender("analyst", "ana")
    for locked in (False, True):
        for analysts in (False, True):
            assert refusal(ana, locked, analysts) is None and refusal(CURATOR, locked, analysts) is None
            assert "reading" in refusal(None, locked, analysts)
    assert refusal(LOCAL, False, False) is None  # one person on their own machine needs no key
    assert refusal(LOCAL, True, False) is not None and refusal(LOCAL, False, True) is not None
    assert "analyst add" in refusal(None, True, False) and "Sign in" in refusal(None, True, True)


def test_the_servers_own_machine_is_a_loopback_address_however_the_socket_reports_it():
    for own in (None, "127.0.0.1", "::1", "::ffff:127.0.0.1", "127.0.0.2"):
        assert loopback(own), own
    for other in ("10.0.0.7", "::ffff:10.0.0.7", "2001:db8::1", "192.0.2.2", "localhost", "", "unknown", 3):
        assert not loopback(other), other


def test_a_key_is_shown_once_and_kept_only_as_a_salted_hash(book, path, capsys):
    key = book.add_analyst("ana", (4.0, 1e-6))
    assert key.startswith("psp-") and key_id(key) is not None
    assert book.sign_in(key, "10.0.0.7") == Spender("analyst", "ana")
    secret = key.split("-", 2)[2].encode()
    assert secret not in file_bytes(path) and key.encode() not in file_bytes(path)
    assert main(["ledger", "analyst", "list", "--ledger", str(path)]) == 0
    listed = capsys.readouterr().out
    assert key not in listed and "hash" not in listed and json.loads(listed)["analysts"][0]["name"] == "ana"
    with pytest.raises(AccessError, match="exists already"):
        book.add_analyst("ana", (1.0, 1e-6))
    for bad in ("", "curator", "a b", "x" * 65):
        with pytest.raises(AccessError, match="analyst's name"):
            book.add_analyst(bad, (1.0, 1e-6))


def test_wrong_revoked_and_expired_keys_get_one_sentence_and_spend_nothing(book):
    key = book.add_analyst("ana", (4.0, 1e-6))
    old = book.add_analyst("old", (4.0, 1e-6), expires=time.time() - 1)
    for wrong in ("", "psp-00000000-nothing", key[:-1] + ("A" if key[-1] != "A" else "B"), "x" * 10_000):
        with pytest.raises(AccessError, match="not valid"):
            book.sign_in(wrong, f"10.0.0.{len(wrong) % 200}")
    with pytest.raises(AccessError, match="expired"):
        book.sign_in(old, "10.0.1.1")
    ana = book.sign_in(key, "10.0.1.2")
    book.revoke_analyst("ana")
    with pytest.raises(AccessError, match="revoked"):
        book.sign_in(key, "10.0.1.3")
    with pytest.raises(Refused, match="revoked"):  # a session already open: refused in the spend's transaction
        book.spend(PEOPLE, 1.0, 1e-7, spender=ana)
    with pytest.raises(AccessError, match="revoked"):
        book.analyst_spender("ana")
    assert book.spent(PEOPLE) == (0.0, 0.0)


def test_an_analyst_spends_within_their_share_and_the_cap_still_binds(book, path):
    book.add_analyst("ana", (3.0, 1e-5))
    book.add_analyst("bo", (100.0, 1.0))
    ana, bo = book.analyst_spender("ana"), book.analyst_spender("bo")
    book.spend(PEOPLE, 2.0, 1e-7, spender=ana)
    assert book.remaining(PEOPLE, ana)[0] == pytest.approx(1.0) and book.remaining(PEOPLE)[0] == pytest.approx(8.0)
    with pytest.raises(Refused, match="their share is \\(3, 1e-05\\)"):
        book.spend(PEOPLE, 1.5, 1e-7, spender=ana)
    book.spend(PEOPLE, 7.0, 1e-7, spender=bo)
    with pytest.raises(Refused, match="the cap is"):  # bo's share is large, the people's cap is not
        book.spend(PEOPLE, 1.5, 1e-7, spender=bo)
    assert [e.spender for e in open_ledger(path).entries(PEOPLE)] == ["ana", "bo"]
    with pytest.raises(Refused, match="not an analyst"):
        book.spend(PEOPLE, 0.1, 1e-8, spender=Spender("analyst", "mallory"))


def test_a_thousand_wrong_keys_in_a_row_are_throttled(book, path, caplog, monkeypatch):
    """An attacker sends 1,000 keys as fast as the server answers (a simulated clock, 10 ms apart): after
    FREE_TRIES failures each attempt must wait twice as long, so only a handful are ever checked, and only those
    cost a scrypt hash."""
    real = book.add_analyst("ana", (1.0, 1e-6))
    guesses = [f"psp-{key_id(real)}-guess{i:04d}" for i in range(1000)]
    now, checked, throttled = 1_000_000.0, 0, 0
    hashed = []
    scrypt = access._hash
    monkeypatch.setattr(access, "_hash", lambda secret, salt: hashed.append(secret) or scrypt(secret, salt))
    with caplog.at_level(logging.WARNING, logger="psp.access"):
        for guess in guesses:
            now += 0.01
            try:
                book.sign_in(guess, "203.0.113.9", now=now)
            except AccessError as exc:
                throttled += "wait" in str(exc)
                checked += "not valid" in str(exc)
    # 10 s of attacks: FREE_TRIES free, then one check after waits of 1, 2 and 4 s (the next is due after 15 s)
    assert checked == FREE_TRIES + 3 and throttled == 1000 - checked
    assert len(hashed) == checked  # throttled attempts cost no scrypt
    with pytest.raises(AccessError, match="from this browser: wait"):  # even the right key must wait now
        book.sign_in(real, "203.0.113.9", now=now)
    with pytest.raises(AccessError, match="with this key: wait"):  # from any address: its key id counts too
        book.sign_in(real, "198.51.100.2", now=now)
    assert book.sign_in(real, "198.51.100.2", now=now + MAX_WAIT).name == "ana"  # once the wait is over
    assert wait(1000, now, now) == MAX_WAIT and wait(FREE_TRIES, now, now) == 1.0 and wait(2, now, now) == 0.0
    stored = file_bytes(path)
    assert not any(g.encode() in stored for g in guesses) and real.split("-", 2)[2].encode() not in stored
    assert not any(g in caplog.text for g in guesses) and real not in caplog.text and "203.0.113.9" in caplog.text
    print(f"1,000 wrong keys: {checked} checked, {throttled} throttled, {len(hashed)} hashed")


def _spend_as(path, name, key, queue) -> None:  # a separate process: its own interpreter and ledger handle
    book = open_ledger(path)
    who = book.sign_in(key, f"10.9.9.{len(name)}")
    spent = 0
    for _ in range(10):
        try:
            book.spend(PEOPLE, 1.0, 1e-7, spender=who)
            spent += 1
        except Refused:
            pass
    queue.put((name, spent))


@pytest.mark.slow
def test_two_analysts_racing_for_the_last_of_a_cap_get_exactly_the_allowed_spends(book, path):
    keys = {name: book.add_analyst(name, (8.0, 1e-5)) for name in ("ana", "bo")}
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_spend_as, args=(path, name, key, queue)) for name, key in keys.items()]
    for w in workers:
        w.start()
    done = dict(queue.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(60)
    entries = open_ledger(path).entries(PEOPLE)
    assert sum(done.values()) == 10 == len(entries)  # the cap of 10 allows exactly ten spends of 1
    assert all(count <= 8 for count in done.values())  # and neither passes their share
    assert {name: sum(e.spender == name for e in entries) for name in keys} == done
    assert open_ledger(path).spent(PEOPLE)[0] == pytest.approx(10.0)


def test_the_command_line_publishes_as_the_curator_or_as_an_analyst(path, capsys):
    assert main(["ledger", "analyst", "add", "ana", "--epsilon", "2", "--delta", "1e-6", "--ledger", str(path)]) == 0
    added = json.loads(capsys.readouterr().out)
    assert added["key"].startswith("psp-") and "once" in added["note"]
    release = ["release", "--synthetic", "--n", "2000", "--d", "3", "--sample-seed", "5", "--coordinate", "0",
               "--delta", "1e-7", "--ledger", str(path)]
    assert main([*release, "--epsilon", "1.5", "--as", "ana"]) == 0
    capsys.readouterr()
    assert main([*release, "--epsilon", "1", "--as", "ana"]) == 2
    assert "share is (2, 1e-06)" in capsys.readouterr().err
    assert main([*release, "--epsilon", "1"]) == 0  # the curator, who holds the file
    capsys.readouterr()
    assert main(["ledger", "show", "--ledger", str(path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["populations"]
    assert row["spent_by"] == {"ana": {"epsilon": 1.5, "delta": 1e-7}, "curator": {"epsilon": 1.0, "delta": 1e-7}}
    assert main(["ledger", "analyst", "revoke", "ana", "--ledger", str(path)]) == 0
    capsys.readouterr()
    assert main([*release, "--epsilon", "0.1", "--as", "ana"]) == 2
    assert "revoked" in capsys.readouterr().err
    assert main(["ledger", "analyst", "add", "cy", "--epsilon", "1", "--delta", "1e-6", "--email", "Cy@Example.org",
                 "--expires-days", "3", "--ledger", str(path)]) == 0
    assert "key" not in json.loads(capsys.readouterr().out)
    book = open_ledger(path)
    assert book.by_email("cy@example.org") == Spender("analyst", "cy") and book.by_email("x@example.org") is None
    assert not math.isinf(next(a for a in book.analysts() if a.name == "cy").expires)


@pytest.fixture(params=["memory", "file"])
def any_book(request, tmp_path, monkeypatch):
    """A ledger in memory or in a file, with a cheap scrypt: these tests count checks, not their cost."""
    monkeypatch.setattr(access, "_SCRYPT", dict(n=2, r=1, p=1, dklen=32))
    if request.param == "memory":
        return Ledger(default_cap=(10.0, 1e-5))
    return open_charged(tmp_path / "ledger.sqlite3", (10.0, 1e-5))


def attack(book, target: str, now: float, source_of, own: str | None = None) -> tuple[int, int, list[str]]:
    """40 guesses at target's key id, 10 ms apart from source_of(i), each followed by own's correct sign-in from the
    same source when given: (guesses checked, own sign-ins that passed, the refusals of throttled guesses)."""
    checked, passed, throttled = 0, 0, []
    for i in range(40):
        now += 0.01
        try:
            book.sign_in(f"psp-{key_id(target)}-guess{i:02d}", source_of(i), now=now)
        except AccessError as exc:
            checked += "not valid" in str(exc)
            throttled += [str(exc)] if "wait" in str(exc) else []
        if own is not None:
            now += 0.01
            try:
                passed += book.sign_in(own, source_of(i), now=now).kind == "analyst"
            except AccessError:
                pass
    return checked, passed, throttled


def test_signing_in_with_ones_own_key_between_guesses_at_anothers_gains_nothing(any_book):
    ana, bo, cy = (any_book.add_analyst(name, (1.0, 1e-6)) for name in ("ana", "bo", "cy"))
    plain, _, _ = attack(any_book, cy, 1e6, lambda i: "198.51.100.7")
    checked, passed, throttled = attack(any_book, bo, 2e6, lambda i: "203.0.113.9", own=ana)
    assert plain == checked == FREE_TRIES  # 40 guesses in 0.8 s: the first wait (1 s) is never over
    assert passed == FREE_TRIES - 1  # her own sign-ins pass until the address must wait, then wait with it
    assert all("from this browser" in t for t in throttled) and len(throttled) == 40 - FREE_TRIES


def test_guesses_from_forty_addresses_are_throttled_by_the_key_id_they_claim(any_book):
    ana, bo = any_book.add_analyst("ana", (1.0, 1e-6)), any_book.add_analyst("bo", (1.0, 1e-6))
    checked, _, throttled = attack(any_book, bo, 1e6, lambda i: f"10.0.0.{i}")
    assert checked == FREE_TRIES and all("with this key" in t for t in throttled) and len(throttled) == 35
    assert any_book.sign_in(ana, "10.0.0.1", now=1e6 + 0.5).name == "ana"  # another key is not locked out
    with pytest.raises(AccessError, match="with this key"):  # ana's success cleared nothing of bo's key id
        any_book.sign_in(f"psp-{key_id(bo)}-guess", "192.0.2.1", now=1e6 + 0.6)
    with pytest.raises(AccessError, match="with this key"):  # bo too waits for the guesses at his key
        any_book.sign_in(bo, "192.0.2.2", now=1e6 + 0.7)
    assert any_book.sign_in(bo, "192.0.2.2", now=1e6 + 2).name == "bo"  # the wait is over
    with pytest.raises(AccessError, match="not valid"):  # and his success reset his key id's count
        any_book.sign_in(f"psp-{key_id(bo)}-guess", "192.0.2.3", now=1e6 + 2.01)


def test_an_analyst_who_mistypes_signs_in_and_an_address_is_forgiven_after_the_window(any_book):
    ana = any_book.add_analyst("ana", (1.0, 1e-6))
    wrong, now, here = ana[:-1] + ("A" if ana[-1] != "A" else "B"), 1e6, "203.0.113.9"
    for _ in range(FREE_TRIES):
        now += 0.01
        with pytest.raises(AccessError, match="not valid"):
            any_book.sign_in(wrong, here, now=now)
    assert any_book.sign_in(ana, here, now=now + 1.0).name == "ana"  # after one second's wait
    with pytest.raises(AccessError, match="not valid"):  # the address's count goes on after her success:
        any_book.sign_in(wrong, here, now=now + 1.01)
    with pytest.raises(AccessError, match="from this browser: wait 2 s"):  # six failures, a 2 s wait
        any_book.sign_in(ana, here, now=now + 1.02)
    with pytest.raises(AccessError, match="not valid"):  # an hour later they no longer count
        any_book.sign_in(wrong, here, now=now + 1.01 + WINDOW)


def test_a_forwarding_header_is_believed_only_from_a_proxy_the_deployment_names():
    none, local = trusted_proxies(lambda name: None), trusted_proxies(lambda name: "127.0.0.1")
    victim = "198.51.100.2"
    assert none == () and [str(n) for n in trusted_proxies(lambda name: " 127.0.0.1, 10.0.0.0/8")] == [
        "127.0.0.1/32", "10.0.0.0/8"]
    assert len(trusted_proxies(lambda name: ["::1", "192.0.2.0/24"])) == 2  # a list in secrets.toml
    assert trusted_proxies(lambda name: "127.0.0.1, nginx") == ()  # a mistyped setting trusts no header
    # uvicorn puts the header's word in place of a loopback peer: rotating it, or forging the victim's, gains nothing
    rotating = {source(f"10.9.{i}.1", [("X-Forwarded-For", f"10.9.{i}.1")], none) for i in range(10)}
    assert rotating == {RELAYED} and source(None, [("X-Real-IP", "1.2.3.4")], none) == RELAYED
    assert source(victim, [("x-forwarded-for", victim)], none) == RELAYED != victim
    # a named proxy: the rightmost address it did not add itself, whatever the client wrote before it
    assert source(None, [("X-Forwarded-For", victim)], local) == victim
    assert source(victim, [("X-Forwarded-For", victim)], local) == victim  # the peer uvicorn replaced
    assert source(None, [("X-Forwarded-For", f"{victim}, 127.0.0.1")], local) == victim
    assert source(None, [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", victim)], local) == victim
    assert source(None, [("X-Forwarded-For", "::ffff:198.51.100.2")], local) == victim  # one address, one source
    for garbage in ("", "not-an-address", "198.51.100.2:443", "198.51.100.2,,", "127.0.0.1"):
        assert source(None, [("X-Forwarded-For", garbage)], local) == RELAYED, garbage
    assert source(None, [("Forwarded", f"for={victim}")], local) == RELAYED  # only X-Forwarded-For is read
    assert source("192.0.2.66", [("X-Forwarded-For", victim)], local) == RELAYED  # a peer no proxy: its own word
    assert source("10.0.0.7", [("Accept", "*/*")], local) == "10.0.0.7" and source(None, [], none) == "this machine"
    assert "PSP_TRUSTED_PROXIES" in too_many(3, "source", RELAYED) and "curator" in too_many(3, "key", victim)


def test_the_app_counts_a_sign_in_under_the_source_its_setting_allows(monkeypatch):
    from types import SimpleNamespace

    import ui.access

    context = SimpleNamespace(ip_address="203.0.113.5", headers={"X-Forwarded-For": "203.0.113.5"})
    monkeypatch.setattr(ui.access, "st", SimpleNamespace(context=context))
    monkeypatch.delenv("PSP_TRUSTED_PROXIES", raising=False)
    assert ui.access._source() == RELAYED
    monkeypatch.setenv("PSP_TRUSTED_PROXIES", "127.0.0.1")
    assert ui.access._source() == "203.0.113.5"
