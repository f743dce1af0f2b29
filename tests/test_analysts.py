"""The curator manages analysts: a share changed, an expiry extended or ended, a revoked analyst reinstated, each
change kept in the ledger with who made it, on both stores and from the command line."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import pytest

from core.cli import main
from core.data.spec import AcsSpec
from core.errors import Refused
from core.privacy.access import AccessError, Spender
from core.privacy.ledger import Ledger, MemoryStore
from core.privacy.ledger_store import SqliteStore

CA = AcsSpec(("CA",)).population()
BO = Spender("analyst", "bo")


@pytest.fixture(params=["memory", "sqlite"])
def ledger(request, tmp_path) -> Ledger:
    store = MemoryStore() if request.param == "memory" else SqliteStore(tmp_path / "ledger.sqlite3")
    book = Ledger(store=store)
    book.set_default_cap((10.0, 1e-5))
    book.add_analyst("bo", (2.0, 1e-6), email="bo@example.org")
    return book


def test_a_share_changed_binds_the_next_spend_and_what_was_spent_stays(ledger):
    ledger.spend(CA, 1.5, 0.0, spender=BO)
    ledger.change_analyst("bo", share=(1.0, 1e-6))  # below what bo has spent: nothing more, nothing given back
    with pytest.raises(Refused):
        ledger.spend(CA, 0.1, 0.0, spender=BO)
    assert ledger.spent_by(CA, "bo") == (1.5, 0.0)
    ledger.change_analyst("bo", share=(3.0, 1e-6))
    ledger.spend(CA, 1.5, 0.0, spender=BO)
    assert ledger.remaining(CA, BO)[0] == pytest.approx(0.0)


def test_a_revoked_analyst_is_reinstated_and_an_expiry_extended_or_ended(ledger):
    ledger.revoke_analyst("bo")
    with pytest.raises(AccessError):
        ledger.analyst_spender("bo")
    ledger.change_analyst("bo", revoked=False)
    assert ledger.analyst_spender("bo") == BO
    ledger.change_analyst("bo", expires=time.time() - 1)  # ended now
    with pytest.raises(AccessError, match="expired"):
        ledger.analyst_spender("bo")
    ledger.change_analyst("bo", expires=math.inf)
    assert ledger.analyst_spender("bo") == BO


def test_every_change_is_kept_with_who_made_it(ledger):
    ledger.change_analyst("bo", share=(3.0, 1e-6), by="curator")
    ledger.revoke_analyst("bo")
    ledger.change_analyst("bo", revoked=False)
    changes = ledger.analyst_changes()
    assert [c.name for c in changes] == ["bo"] * 4 and {c.by for c in changes} == {"curator"}
    assert changes[0].change.startswith("added with a share of ε = 2")
    assert changes[1].change == "share ε = 2, δ = 1e-06 → ε = 3, δ = 1e-06"
    assert [c.change for c in changes[2:]] == ["revoked", "reinstated"]
    with pytest.raises(AccessError, match="nothing to change"):
        ledger.change_analyst("bo")
    with pytest.raises(AccessError, match="no analyst named al"):
        ledger.change_analyst("al", revoked=False)
    assert len(ledger.analyst_changes()) == 4  # a refused change logs nothing


def test_the_command_line_changes_a_share_and_reinstates(tmp_path, capsys):
    path = str(tmp_path / "ledger.sqlite3")
    assert main(["ledger", "analyst", "add", "al", "--epsilon", "2", "--delta", "1e-6", "--ledger", path]) == 0
    assert main(["ledger", "analyst", "revoke", "al", "--ledger", path]) == 0
    assert main(["ledger", "analyst", "change", "al", "--reinstate", "--epsilon", "3", "--ledger", path]) == 0
    capsys.readouterr()
    assert main(["ledger", "analyst", "list", "--ledger", path]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["analysts"][0]["share"] == {"epsilon": 3.0, "delta": 1e-6} and not listed["analysts"][0]["revoked"]
    assert [c["change"] for c in listed["changes"]][1:] == [
        "revoked", "share ε = 2, δ = 1e-06 → ε = 3, δ = 1e-06; reinstated"]
    assert main(["ledger", "analyst", "change", "al", "--ledger", path]) == 2
    assert "nothing to change for al" in capsys.readouterr().err


@pytest.mark.slow
def test_a_listing_piped_into_head_ends_quietly(tmp_path):
    """`python -m core ledger export | head -c 1`: the reader leaves early, and no traceback is printed."""
    env_ledger = str(tmp_path / "ledger.sqlite3")
    book = Ledger(store=SqliteStore(env_ledger))
    book.set_default_cap((1e6, 1e-3))
    for _ in range(600):  # a log longer than a pipe's buffer, so the writer meets the closed pipe
        book.spend(CA, 1.0, 0.0)
    shown = subprocess.run(f"{sys.executable} -m core ledger export --ledger {env_ledger} | head -c 1", shell=True,
                           capture_output=True, text=True, timeout=60)
    assert shown.stdout == "{" and "Traceback" not in shown.stderr and "BrokenPipe" not in shown.stderr
