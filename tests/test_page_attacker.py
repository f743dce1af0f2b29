"""The attacker's view page in AppTest: closed in publish mode; in teaching mode the pair, every stage's law, the
privacy loss, a round of the game, the computer's rounds and the baselines, with no exception."""

from __future__ import annotations

import re

from apptest import on_page

SMALL = {"n": 20_000, "d": 3}


def attacker(**settings):
    at = on_page("attacker", **{**SMALL, **settings})
    assert not at.exception, at.exception
    return at


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_publish_mode_shows_nothing_of_the_data():
    at = attacker(mode="publish")
    assert any("teaching mode only" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.metric


def test_teaching_mode_draws_every_stage_and_the_loss():
    at = attacker()
    assert not at.get("plotly_chart")  # drawn as SVG: a new tab loads no Plotly for them
    titles = [re.search(r"<title>(.*?)</title>", m.value).group(1) for m in at.main.markdown
              if m.value.startswith('<div class="psp-figure">')]
    assert [t.split(":")[0] for t in titles] == ["Stage 1", "Stage 2", "Stage 4", "Privacy loss"]
    text = captions(at)
    assert "The exact count is" in text and "standard deviations" in text
    labels = [m.label for m in at.metric]
    assert "Best the guarantee allows" in labels and all("$" not in label for label in labels)
    best = next(m.value for m in at.metric if m.label == "Best the guarantee allows")
    assert best == "98.2%"  # (e^4 + 1e-6)/(1 + e^4) at the app's default budget


def test_a_round_of_the_game_is_scored_and_revealed():
    at = attacker()
    at.button(key="attack_draw").click().run()
    assert at.button(key="attack_draw").disabled  # one round at a time: the secret waits for its guess
    at.button(key="attack_in").click().run()
    said = [s.value for s in at.success] + [w.value for w in at.warning]
    assert len(said) == 1 and said[0].startswith(("Right", "Wrong"))
    assert not at.button(key="attack_draw").disabled
    right = next(m.value for m in at.metric if m.label == "Your guesses right")
    assert right in ("0.0% (0 of 1)", "100.0% (1 of 1)") and (right == "100.0% (1 of 1)") == said[0].startswith("Right")


def test_the_computer_plays_and_the_baselines_draw():
    at = attacker(noise_seed=5)
    at.button(key="attack_computer").click().run()
    assert any(m.label == "The computer's" and re.fullmatch(r"\d+\.\d% \(\d+ of 200\)", m.value) for m in at.metric)
    assert "What your guesses prove" not in captions(at) and "What the computer's guesses prove" in captions(at)
    at.number_input(key="attack_draws").set_value(5).run()
    at.button(key="attack_baselines").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["method"]) == ["Local (Algorithm 5)", "Output perturbation", "Objective perturbation", "DP-SGD"]
    assert (table["released"] == "5 of 5").sum() >= 3
    for column in ("noise sd", "median paired gap"):  # three significant digits, however small
        assert all(v == "nan" or v == f"{float(v):.3g}" and float(v) != 0 for v in table[column]), table[column]


def test_a_picked_row_is_the_pair_s():
    at = attacker()
    at.toggle(key="attack_pick").set_value(True).run()
    at.number_input(key="attack_row").set_value(7).run()
    assert not at.exception, at.exception
    assert any("row 7 (the row you picked)" in m.value for m in at.markdown)
