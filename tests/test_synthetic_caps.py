"""A state's cap binds every SYNTHETIC census sample of that state (`Population.census_samples_of`), whatever its size,
and no other state's."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.errors import Refused
from core.privacy.ledger_store import open_ledger
from core.privacy.population import Population

CA_SMALL = Population.census_sample(("CA",), 2018, "1-Year", 1_000)
CA_LARGE = Population.census_sample(("CA",), 2018, "1-Year", 50_000)
TX = Population.census_sample(("TX",), 2018, "1-Year", 1_000)
CA_SAMPLES = Population.census_samples_of("CA", 2018, "1-Year")


def cli(capsys, *argv: str) -> dict:
    """Run `python -m core` in this process; its JSON output."""
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def capped(tmp_path, capsys) -> tuple[str, dict]:
    """A ledger file with a default cap of (10, 1e-5) and `set-cap --state CA` at (2, 1e-6): its path and what
    set-cap printed."""
    path = str(tmp_path / "L.sqlite")
    cli(capsys, "ledger", "set-cap", "--default", "--epsilon", "10", "--delta", "1e-5", "--ledger", path)
    return path, cli(capsys, "ledger", "set-cap", "--state", "CA", "--epsilon", "2", "--delta", "1e-6",
                     "--ledger", path)


def test_set_cap_state_caps_the_census_persons_and_every_synthetic_sample_of_the_state(capped):
    _, printed = capped
    listed = [(p["population"]["kind"], p["population"]["key"], p["cap"]) for p in printed["populations"]]
    cap = {"epsilon": 2.0, "delta": 1e-6}
    assert listed == [("acs", [["CA"], 2018, "1-Year"], cap), ("synthetic_census", [["CA"], 2018, "1-Year"], cap)]
    assert printed["populations"][1]["population"]["description"] == (
        "the made-up persons of every SYNTHETIC census-like sample of CA (2018, 1-Year)")


def test_a_second_ca_sample_is_refused_once_the_state_cap_is_spent_and_the_refusal_charges_nothing(capped, capsys):
    path, _ = capped
    ledger = open_ledger(path)
    assert ledger.cap(CA_SMALL) == ledger.cap(CA_LARGE) == (2.0, 1e-6)  # not the default (10, 1e-5)
    ledger.spend(CA_SMALL, 1.5, 5e-7)
    with pytest.raises(Refused) as refused:
        ledger.spend(CA_LARGE, 1.0, 1e-7)  # its own part has spent nothing: the state's part refuses it
    assert str(refused.value).startswith(
        "refused: this draw costs (ε, δ) = (1, 1e-07); (1.5, 5e-07) is already spent on the made-up persons of every "
        "SYNTHETIC census-like sample of CA (2018, 1-Year), and the cap is (2, 1e-06).")
    assert "\n" not in str(refused.value)
    assert [(e["kind"], json.loads(e["key"])) for e in ledger.log()] == [("synthetic_census",
                                                                          [["CA"], 2018, "1-Year", 1_000])]
    assert ledger.remaining(CA_LARGE) == pytest.approx((0.5, 5e-7), rel=1e-12)
    ledger.spend(CA_LARGE, 0.5, 5e-7)  # exactly what is left: the refused draw took none of it
    (row,) = [r for r in cli(capsys, "ledger", "show", "--ledger", path)["populations"]
              if r["population"]["key"] == [["CA"], 2018, "1-Year"] and r["population"]["kind"] == "synthetic_census"]
    assert row["entries"] == 2 and row["spent"] == {"epsilon": 2.0, "delta": 1e-6}
    assert row["cap"] == {"epsilon": 2.0, "delta": 1e-6}


def test_a_tx_sample_is_not_capped_by_ca(capped, capsys):
    path, _ = capped
    ledger = open_ledger(path)
    assert ledger.cap(TX) == (10.0, 1e-5)
    ledger.spend(CA_SMALL, 2.0, 1e-6)  # CA's samples are spent to their cap
    ledger.spend(TX, 5.0, 5e-6)
    assert ledger.spent(TX) == (5.0, 5e-6) and ledger.spent(CA_SAMPLES) == (2.0, 1e-6)
    assert ledger.spent(Population.census_samples_of("TX", 2018, "1-Year")) == (5.0, 5e-6)
    shown = cli(capsys, "ledger", "show", "--ledger", path)["populations"]
    # TX was never capped: its state's part is listed because it was charged, under the default cap.
    tx = [r for r in shown if r["population"]["key"] == [["TX"], 2018, "1-Year"]]
    assert [(r["population"]["kind"], r["cap"]["epsilon"]) for r in tx] == [("synthetic_census", 10.0)]


def test_an_uncharged_state_part_is_not_listed(capped, capsys):
    path, _ = capped
    shown = cli(capsys, "ledger", "show", "--ledger", path)["populations"]
    assert [(r["population"]["kind"], r["population"]["key"]) for r in shown] == [("acs", [["CA"], 2018, "1-Year"])]


def test_the_parts_of_a_two_state_sample_hold_each_states_samples():
    both = Population.census_sample(("MI", "CA"), 2018, "1-Year", 1_000)
    mi_samples = Population.census_samples_of("MI", 2018, "1-Year")
    assert both.parts() == (CA_SMALL, Population.census_sample(("MI",), 2018, "1-Year", 1_000), CA_SAMPLES,
                            mi_samples)
    assert CA_SMALL.parts() == (CA_SMALL, CA_SAMPLES) and CA_SAMPLES.parts() == (CA_SAMPLES,)
    assert CA_SAMPLES not in Population.census(("CA",), 2018, "1-Year").parts()  # never the real people
    assert Population.census_sample(("CA",), 2018, "5-Year", 1_000).parts()[1] == Population.census_samples_of(
        "CA", 2018, "5-Year") != CA_SAMPLES
