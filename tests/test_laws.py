"""Laws that hold for every value in range (hypothesis): a split's stages compose to the total it was asked for, a
release's two phases cost one person what the whole release costs, and every setting round-trips through a link.

The ranges are every surface's (core.settings): a total epsilon from MIN_EPSILON to MAX_EPSILON, delta from MIN_DELTA
to MAX_DELTA, split weights from MIN_WEIGHT to MAX_WEIGHT, and a person filling k rows of a sample drawn with
replacement (core.privacy.unit).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.errors import BudgetError
from core.privacy.accounting import MAX_WEIGHT, MIN_WEIGHT, make_budget
from core.privacy.charge import phase_cost
from core.privacy.gaussian import MAX_DELTA, MAX_EPSILON, MIN_DELTA, MIN_EPSILON
from core.privacy.unit import PrivacyUnit

RELATIVE = 1e-9  # how close to the total a split's composition must come (its last-bit rounding is ~1e-16)
ROUNDING = 1e-12  # the phases' rounding, relative to the whole release's cost (one subtraction from it)

epsilons = st.one_of(st.floats(MIN_EPSILON, 1.0), st.floats(MIN_EPSILON, MAX_EPSILON))  # small ones often
deltas = st.floats(MIN_DELTA, MAX_DELTA)
weights = st.tuples(*[st.floats(MIN_WEIGHT, MAX_WEIGHT)] * 3)
units = st.builds(PrivacyUnit, st.sampled_from(["row", "person"]), st.one_of(st.just(1), st.integers(2, 20)))


@settings(max_examples=300, deadline=None)
@given(epsilons, deltas, weights)
def test_a_basic_split_composes_to_its_total(epsilon, delta, split):
    """Basic composition (docs/method.md §9) of the three stages, written out here: eps_a + eps_b + 2 eps_c and
    e^(eps_a + eps_b) (delta_a + delta_b) + (1 + e^eps_c) delta_c. Each is at most the total (never a bit past
    it) and within RELATIVE of it, every stage's share is positive, and the shares follow the weights."""
    b = make_budget(epsilon, delta, split, "basic")
    a, m, c = b.lambda_min, b.lambda_max, b.release
    for stage in (a, m, c):
        assert stage.epsilon > 0 and stage.delta > 0
    eps = a.epsilon + m.epsilon + 2 * c.epsilon
    dlt = math.exp(a.epsilon + m.epsilon) * (a.delta + m.delta) + (1 + math.exp(c.epsilon)) * c.delta
    assert epsilon * (1 - RELATIVE) <= eps <= epsilon
    assert delta * (1 - RELATIVE) <= dlt <= delta
    assert (b.epsilon_basic, b.delta_basic) == pytest.approx((eps, dlt), rel=1e-15)
    total = sum(split)
    shares = (a.epsilon, m.epsilon, 2 * c.epsilon)
    assert shares == pytest.approx(tuple(w / total * eps for w in split), rel=RELATIVE)
    grow = math.exp(a.epsilon + m.epsilon)
    shares = (grow * a.delta, grow * m.delta, (1 + math.exp(c.epsilon)) * c.delta)
    assert shares == pytest.approx(tuple(w / total * dlt for w in split), rel=RELATIVE)


@settings(max_examples=300, deadline=None)
@given(epsilons, deltas, weights, units)
@example(1.0, 0.0625, (0.0078125, 0.0078125, 342.5), PrivacyUnit("row", 1))  # 1 - 2 eps_c rounds below eps_a + eps_b
def test_the_two_phases_cost_one_person_the_whole_release(epsilon, delta, split, unit):
    """Certify first, then release: the certificates' cost and the release event's add up to the whole release's,
    per person (group privacy for a person filling k rows), each phase costs something, and stopping after the
    certificates pays at least their pure cost per person, exactly (never an ulp under it). A whole that
    protects no one (a person's delta reaching 1) is refused in every phase."""
    b = make_budget(epsilon, delta, split, "basic")
    k = unit.max_rows_per_person
    per_person = unit.per_person(b.epsilon_total, b.delta_total)
    if not (math.isfinite(per_person[0]) and per_person[1] < 1):
        for phase in ("whole", "certificates", "release"):
            with pytest.raises(BudgetError, match="no guarantee at all"):
                phase_cost(b, unit, phase)
        return
    whole = phase_cost(b, unit, "whole")
    certificates = phase_cost(b, unit, "certificates")
    release = phase_cost(b, unit, "release")
    assert whole == per_person
    assert certificates[0] + release[0] == pytest.approx(whole[0], rel=ROUNDING)
    assert certificates[1] + release[1] == pytest.approx(whole[1], rel=ROUNDING)
    assert min(*certificates, *release) > 0
    pure = unit.per_person(b.lambda_min.epsilon + b.lambda_max.epsilon, b.lambda_min.delta + b.lambda_max.delta)
    assert certificates[0] >= pure[0] and certificates[1] >= pure[1]
    assert certificates[0] >= k * (b.lambda_min.epsilon + b.lambda_max.epsilon)
    assert release == pytest.approx(unit.per_person(2 * b.release.epsilon,
                                                    (1 + math.exp(b.release.epsilon)) * b.release.delta), rel=1e-15)


# ---------------------------------------------------------------- the settings' link round trip


def link_values(key: str):
    """Every value a setting of ui.params.PARAMS may hold: its choices, or numbers of its kind inside its bounds."""
    from ui.params import PARAMS, _bool, _methods, _names, _opt_float, _opt_int

    p = PARAMS[key]
    if p.choices is not None:
        return st.sampled_from(p.choices)
    if p.parse is _bool:
        return st.booleans()
    if p.parse is _names:  # feature names as a link can carry them: no comma, no surrounding space
        letters = st.characters(codec="utf-8", exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
                                exclude_characters=",")
        name = st.text(letters, min_size=1, max_size=12)
        return st.lists(name, unique=True, max_size=6)
    if p.parse is _methods:
        from core.methods.compare import METHODS

        return st.lists(st.sampled_from(METHODS), min_size=1, unique=True)
    if p.parse in (int, _opt_int):
        lo, hi = (int(b) for b in p.bounds)
        values = st.integers(lo, hi)
        return st.one_of(st.none(), values) if p.parse is _opt_int else values
    if p.parse in (float, _opt_float):
        values = st.floats(*p.bounds, allow_nan=False)
        return st.one_of(st.none(), values) if p.parse is _opt_float else values
    return st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


def _params():
    from ui.params import PARAMS

    return sorted(PARAMS)


@pytest.mark.parametrize("key", _params())
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_setting_written_into_a_link_reads_back_as_itself(key, data):
    """Every value of every setting, written into a link (ui.params.sync_url's text) and read back (link_value), is
    used, not ignored, and is the same value (a float to the 12 digits a link keeps); writing it again gives the same
    text, so a shared link reproduces the view."""
    from ui.params import _format, link_value

    value = data.draw(link_values(key))
    text = _format(value)
    back, why = link_value(key, text)
    assert why is None, (key, text, why)
    if isinstance(value, float):
        assert back == pytest.approx(value, rel=1e-11, abs=1e-300)
    else:
        assert back == value
    assert _format(back) == text
