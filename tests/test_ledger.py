"""The privacy ledger: caps per population, refusal at the cap, sums, shared people and racing threads."""

from __future__ import annotations

import pickle
import time

import pytest

from core.data.spec import AcsSpec, CsvSpec, SyntheticSpec
from core.errors import BudgetError, Refused
from core.privacy.ledger import TOLERANCE, Ledger, LedgerEntry, MemoryStore
from core.privacy.population import Population

CA = AcsSpec(("CA",)).population()
MI = AcsSpec(("MI",)).population()
CA_MI = AcsSpec(("CA", "MI")).population()
UPLOAD = Population.file("ab" * 32, "mine.csv")


def test_default_cap_and_caps_per_population():
    ledger = Ledger((4.0, 1e-5), {UPLOAD: (1.0, 1e-6)})
    assert ledger.cap(CA) == ledger.default_cap == (4.0, 1e-5)
    assert ledger.cap(UPLOAD) == (1.0, 1e-6)
    ledger.spend(UPLOAD, 1.0, 1e-6)
    with pytest.raises(Refused):
        ledger.spend(UPLOAD, 0.5, 0.0)
    ledger.spend(CA, 3.0, 1e-6)  # the default cap, not the upload's
    ledger.set_cap(UPLOAD, (2.0, 1e-5))
    ledger.spend(UPLOAD, 0.5, 0.0)
    ledger.set_default_cap((3.5, 1e-5))
    assert ledger.remaining(CA) == pytest.approx((0.5, 9e-6))


def test_refusal_exactly_at_the_boundary():
    ledger = Ledger((1.0, 1e-5))
    for _ in range(10):  # ten draws of 0.1 sum to the cap up to rounding, and all fit
        ledger.spend(CA, 0.1, 1e-6)
    assert ledger.spent(CA) == pytest.approx((1.0, 1e-5), rel=1e-15)
    assert ledger.remaining(CA) == pytest.approx((0.0, 0.0), abs=1e-15)
    with pytest.raises(Refused):
        ledger.spend(CA, 1e-9, 0.0)
    with pytest.raises(Refused):
        ledger.spend(CA, 0.0, 1e-15)
    ledger.spend(CA, 0.0, 0.0)  # a draw that costs nothing always fits
    exact = Ledger((1.0, 1e-6))
    exact.check(MI, 1.0, 1e-6)  # reaching the cap is allowed ...
    exact.check(MI, 1.0 * (1 + TOLERANCE / 2), 1e-6)  # ... up to the relative tolerance of 1e-12 ...
    with pytest.raises(Refused):
        exact.check(MI, 1.0 * (1 + 1e-11), 1e-6)  # ... and no further
    with pytest.raises(Refused):
        exact.check(MI, 1.0, 1e-6 * (1 + 1e-11))


def test_the_refusal_says_cost_spent_and_cap():
    ledger = Ledger((4.0, 1e-5))
    ledger.spend(CA, 3.0, 1e-6)
    with pytest.raises(Refused) as err:
        ledger.check(CA, 2.0, 1e-6)
    text = str(err.value)
    assert text.startswith("refused: this draw costs (ε, δ) = (2, 1e-06)")
    assert "(3, 1e-06) is already spent on the persons of the ACS 2018 1-Year person file of CA" in text
    assert "the cap is (4, 1e-05)" in text
    assert ledger.refusal(CA, 1.0, 1e-6) is None and ledger.refusal(CA, 2.0, 1e-6) == text
    assert ledger.spent(CA) == (3.0, 1e-6)  # a refused check charges nothing


def test_spent_sums_and_entries():
    ledger = Ledger((10.0, 1e-4))
    costs = [(1.0, 1e-6), (2.5, 3e-6), (0.25, 0.0)]
    for i, (e, d) in enumerate(costs):
        entry = ledger.spend(UPLOAD, e, d, record=f"release {i}")
        assert isinstance(entry, LedgerEntry) and entry.record == f"release {i}"
    assert ledger.spent(UPLOAD) == (3.75, 4e-6)
    assert ledger.remaining(UPLOAD) == (6.25, pytest.approx(9.6e-5))
    assert [(x.epsilon, x.delta, x.record) for x in ledger.entries(UPLOAD)] == [
        (e, d, f"release {i}") for i, (e, d) in enumerate(costs)]
    assert ledger.spent(CA) == (0.0, 0.0) and ledger.entries(CA) == ()


def test_two_populations_are_independent():
    ledger = Ledger((4.0, 1e-5))
    ledger.spend(CA, 4.0, 1e-5)
    ledger.spend(UPLOAD, 4.0, 1e-5)
    ledger.spend(MI, 4.0, 1e-5)
    other = CsvSpec.from_bytes("other.csv", b"x,y\n1,2\n").population()
    assert ledger.spent(other) == (0.0, 0.0)
    ledger.check(other, 4.0, 1e-5)
    with pytest.raises(Refused):
        ledger.check(CA, 0.1, 0.0)


def test_one_budget_for_the_same_people_through_different_specs(tmp_path):
    first = AcsSpec(("CA", "MI"), n=1000, sample_seed=1, root=str(tmp_path))
    resampled = AcsSpec(("MI", "CA"), n=5000, sample_seed=2, download=True, with_replacement=True)
    ledger = Ledger((4.0, 1e-5))
    ledger.spend(first.population(), 3.0, 1e-6)
    assert ledger.spent(resampled.population()) == (3.0, 1e-6)
    with pytest.raises(Refused, match="already spent"):
        ledger.spend(resampled.population(), 2.0, 1e-6)
    same_file = CsvSpec.from_bytes("b.csv", b"x,y\n1,2\n").population()
    ledger.spend(CsvSpec.from_bytes("a.csv", b"x,y\n1,2\n").population(), 4.0, 0.0)
    with pytest.raises(Refused):
        ledger.spend(same_file, 0.5, 0.0)
    seeded = SyntheticSpec(n=500, d=2, sample_seed=1)
    ledger.spend(seeded.population(), 4.0, 0.0)
    ledger.check(SyntheticSpec(n=500, d=2, sample_seed=2).population(), 4.0, 0.0)  # other rows, other people


def test_states_share_their_people_with_every_union():
    ledger = Ledger((4.0, 1e-5))
    ledger.spend(CA, 3.0, 1e-6)
    assert ledger.spent(CA_MI) == (3.0, 1e-6)  # its most exposed person has seen 3
    with pytest.raises(Refused, match="person file of CA"):
        ledger.spend(CA_MI, 2.0, 1e-6)
    ledger.spend(CA_MI, 1.0, 1e-6)
    assert ledger.spent(CA) == (4.0, 2e-6) and ledger.spent(MI) == (1.0, 1e-6)
    assert ledger.remaining(MI) == (3.0, pytest.approx(9e-6)) and ledger.remaining(CA_MI) == (0.0, pytest.approx(8e-6))
    assert len(ledger.entries(CA_MI)) == 2 and len(ledger.entries(MI)) == 1
    capped = Ledger((4.0, 1e-5), {CA_MI: (2.0, 1e-5)})  # a cap on a union caps each of its states
    assert capped.cap(CA) == capped.cap(MI) == (2.0, 1e-5) and capped.cap(AcsSpec(("TX",)).population()) == (4.0, 1e-5)


class SlowStore(MemoryStore):
    """A store that yields to other threads while the ledger reads it, so that races show."""

    def entries(self, part: Population) -> tuple[LedgerEntry, ...]:
        found = super().entries(part)
        time.sleep(0.002)
        return found


def test_threads_racing_past_the_cap_spend_exactly_what_fits(race):
    outcomes: list[str] = []

    def draw() -> None:
        try:
            ledger.spend(CA, 1.0, 1e-6)
            outcomes.append("spent")
        except Refused:
            outcomes.append("refused")

    for _round in range(10):
        ledger = Ledger(store=SlowStore((5.0, 1e-5)))  # room for exactly five draws of 1.0
        outcomes.clear()
        race(draw)
        assert sorted(outcomes) == ["refused"] * 3 + ["spent"] * 5
        assert ledger.spent(CA) == (5.0, pytest.approx(5e-6)) and len(ledger.entries(CA)) == 5


def test_bad_costs_and_caps_are_refused():
    ledger = Ledger((1.0, 1e-5))
    for cost in ((-0.1, 0.0), (0.1, -1e-9), (float("nan"), 0.0), (0.1, 2.0)):
        with pytest.raises(BudgetError):
            ledger.spend(CA, *cost)
    assert ledger.entries(CA) == ()
    with pytest.raises(BudgetError, match="default cap"):
        Ledger((-1.0, 1e-5))
    with pytest.raises(BudgetError):
        ledger.set_cap(CA, (1.0, float("nan")))


def test_the_store_is_replaceable_and_the_ledger_copies():
    class CountingStore(MemoryStore):
        appended = 0

        def append(self, entry: LedgerEntry) -> None:
            CountingStore.appended += 1
            super().append(entry)

    ledger = Ledger(store=CountingStore((4.0, 1e-5)))
    ledger.spend(CA_MI, 1.0, 1e-6)
    assert CountingStore.appended == 1 and ledger.spent(MI) == (1.0, 1e-6)


def test_a_ledger_copies_with_a_lock_of_its_own():
    ledger = Ledger((4.0, 1e-5))
    ledger.spend(CA_MI, 1.0, 1e-6, record="first")
    copy = pickle.loads(pickle.dumps(ledger))
    assert copy.spent(CA) == (1.0, 1e-6) and copy.entries(CA)[0].record == "first"
    copy.spend(CA, 1.0, 0.0)
    assert ledger.spent(CA) == (1.0, 1e-6)  # the copy is a separate ledger
