"""Attacker's view (teaching mode): the pipeline on the data with and without one person's row, stage by stage, the
privacy loss between the two, the membership game, and the baselines at the same budget.

Everything here reads both data sets, so nothing is private and the page is closed in publish mode. The pair and
every stage's law are deterministic (ui.cache, from core.teaching.attack); the game's rounds and the baselines' draws
are fresh noise every time, kept in the session (ui.keys.AttackRecord) only while the plan and row they were drawn with
hold. Layout only: every number comes from core.teaching.attack, every figure from ui.attack_figures.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import streamlit as st

from core.errors import PspError
from core.mechanisms.pipeline import Problem
from core.plan import ReleasePlan
from core.privacy.accounting import Budget
from core.privacy.gaussian import exp_magnitude
from core.teaching import attack
from ui import cache, keys, loaded, params, release, session
from ui.attack_figures import baseline_figure, game_figure
from ui.attack_sketches import count_sketch, loss_sketch, release_sketch
from ui.boot import through_navigation
from ui.charts import chart, sketch
from ui.controls import budget as budget_setting
from ui.format import data_table, fixed, metric_row, num, percent, presenting, tagged
from ui.labels import message
from ui.theme import METHOD_LABELS

through_navigation()  # a deep link's first run on a fresh server goes through app.py

BASELINES = ("local", "output_perturbation", "objective_perturbation", "dp_sgd")
COMPUTER_ROUNDS = 200
MAX_DRAWS = 100


# ---------------------------------------------------------------- the pair


def chosen_row(problem: Problem) -> int | None:
    """None: the row that moves the coefficient most; else the 0-based row the user picked (shown 1-based)."""
    pick = st.toggle("Pick the row myself", key="attack_pick",
                     help="Off: the app finds the row whose swap moves the coefficient most (the worst case among "
                     "the data's own rows)")
    if not pick:
        return None
    st.session_state["attack_row"] = min(max(int(st.session_state.get("attack_row", 1)), 1), problem.n)
    return int(st.number_input("Row number", min_value=1, max_value=problem.n, step=1, key="attack_row",
                               help=f"A row of the loaded data, 1 to {problem.n:,}")) - 1


def pair_summary(pair: attack.Neighbours, name: str) -> None:
    how = "the row that moves it most" if st.session_state.get("attack_pick") is not True else "the row you picked"
    st.markdown(
        f"**P** is the loaded data; **P′** is the same data with row {pair.row + 1:,} ({how}) replaced by row "
        f"{pair.partner + 1:,}, the row that pulls {name} the other way most. The guarantee is about any two data "
        "sets one row apart: whoever you are, the release must look about the same whether your row is in or not.")
    metric_row([
        ("uᵀθ(P) · not private", num(sum(pair.P.fit.along(pair.u))), "The coefficient fitted on P, without noise"),
        ("Its move to P′ · not private", num(pair.shift), "uᵀθ(P′) − uᵀθ(P), from the two fits"),
        ("First-order estimate", num(pair.influence), "The influence estimate that chose the rows (one Newton step)"),
    ])


# ---------------------------------------------------------------- stage by stage


def stages(laws: attack.Laws) -> None:
    st.markdown(tagged("### Stage by stage"))
    st.caption("Each stage on the branch most likely on P: the certificates at their likeliest values, the same on "
               "both data sets, as a real run on either would use them.")
    # Side by side, or in presentation mode one above the other: a figure in half a column would have small text.
    left, right = (st.container(), st.container()) if presenting() else st.columns(2)
    with left:
        count_stage(laws.stage1, "Stage 1", "λmin", "stage1")
    with right:
        if laws.stage2 is None:
            st.info("Stage 2 is not reached on this branch: λ̂min = 0.")
        else:
            count_stage(laws.stage2, "Stage 2", "λmax", "stage2")
    verdict = "passes" if laws.test.passed else f"fails ({laws.test.reason})"
    st.markdown(f"**Stage 3.** On this branch the stability test (14) {verdict}, on both data sets alike: it reads "
                "only the certificates.")
    if laws.release is None:
        st.info("Nothing is released on this branch (⊥), so there is no released value to compare.")
        return
    r = laws.release
    sketch("attack_release", release_sketch, r)
    st.caption(f"The row moves uᵀθ by {num(abs(r.mean_prime - r.mean))}; the noise's standard deviation is "
               f"{num(r.sd)} with the row and {num(r.sd_prime)} without: the shift is "
               f"{fixed(abs(r.mean_prime - r.mean) / r.sd, 2)} standard deviations.")


def count_stage(law: attack.CountLaw, stage: str, symbol: str, key: str) -> None:
    sketch(f"attack_{key}", count_sketch, law, stage, symbol, share=0.5)
    st.caption(f"The exact count is {law.N:,} with the row and {law.N_prime:,} without. The released m's "
               f"probabilities differ by a factor of at most {exp_magnitude(law.ratio)} (the stage's ε = "
               f"{law.epsilon:.3g} allows {exp_magnitude(law.epsilon)}); the likeliest m is {law.mode:,}, "
               f"λ̂{symbol[1:]} = {num(law.lambda_hat)}.")


def privacy_loss(laws: attack.Laws, b: Budget) -> None:
    st.markdown(tagged("### Privacy loss"))
    loss = laws.loss
    sketch("attack_loss", loss_sketch, loss, cache.privacy_profile(b))
    metric_row([
        ("This pair's ε at the chosen δ · not private", f"{loss.epsilon_at_delta:.3g}",
         f"The smallest ε this pair needs at δ = {b.delta_total:g}; the guarantee claims {b.epsilon_total:g}"),
        ("Best guess on this pair · not private", percent((1 + loss.tv) / 2),
         "The best chance of telling P from P′ from one release, each drawn half the time: (1 + TV)/2"),
        ("Best the guarantee allows", percent(attack.best_accuracy(b.epsilon_total, b.delta_total)),
         "(e^ε + δ)/(1 + e^ε): no guesser does better on any pair one row apart"),
    ])


# ---------------------------------------------------------------- the game


def game(pair: attack.Neighbours, laws: attack.Laws, b: Budget, plan: ReleasePlan, row: int) -> None:
    st.markdown(tagged("### The membership game"))
    st.caption("A fair coin, hidden from you, picks P or P′; the real pipeline releases on it with fresh noise. "
               "Guess whether the row was in. The app scores the guesses against what (ε, δ) allows.")
    record = keys.attack_record(plan, row)
    keys.ATTACK.set(record)  # the buttons' callbacks update the kept record before the page is drawn again
    cols = st.columns(3)
    cols[0].button("Draw a release", type="primary", key="attack_draw", on_click=draw, args=(pair, b),
                   disabled=record.pending is not None)
    cols[1].button(f"Let the computer play {COMPUTER_ROUNDS} rounds", key="attack_computer", on_click=play,
                   args=(pair, laws, b), help="It guesses by the likelihood ratio of the two laws drawn above: the "
                   "best rule there is on this branch")
    cols[2].button("Start again", key="attack_reset", on_click=keys.ATTACK.set,
                   args=(dataclasses.replace(record, rounds=(), pending=None, computer=None),))
    if record.pending is not None:
        show_round(record.pending, laws)
    elif record.rounds:
        last = record.rounds[-1]
        right = last.guess == last.with_row
        (st.success if right else st.warning)(
            f"{'Right' if right else 'Wrong'}: that release came from "
            f"{'P, with' if last.with_row else 'P′, without'} the row.")
    scored = attack.score(record.rounds, b.epsilon_total, b.delta_total)
    if scored.rounds or record.computer is not None:
        game_results(scored, record.computer)


def draw(pair: attack.Neighbours, b: Budget) -> None:
    """A new round, fresh noise from OS entropy (never seeded: the coin must stay secret)."""
    record = keys.ATTACK.get()
    keys.ATTACK.set(dataclasses.replace(
        record, pending=attack.draw_round(pair, b, np.random.default_rng(), params.get("calibration"))))


def answer(with_row: bool) -> None:
    record = keys.ATTACK.get()
    if record.pending is not None:  # a second click on a stale button must not count twice
        done = dataclasses.replace(record.pending, guess=with_row)
        keys.ATTACK.set(dataclasses.replace(record, rounds=(*record.rounds, done), pending=None))


def play(pair: attack.Neighbours, laws: attack.Laws, b: Budget) -> None:
    record = keys.ATTACK.get()
    keys.ATTACK.set(dataclasses.replace(record, computer=computer_score(pair, laws, b, params.get("calibration"))))


def show_round(r: attack.Round, laws: attack.Laws) -> None:
    """The waiting round's release, and the two guesses."""
    if laws.release is not None and r.value is not None:
        sketch("attack_round", release_sketch, laws.release, r.value)
    else:
        st.info("This round released ⊥ (nothing)." if r.value is None else f"This round released T = {num(r.value)}.")
    left, right = st.columns(2)
    left.button("The row was in (P)", key="attack_in", on_click=answer, args=(True,))
    right.button("The row was out (P′)", key="attack_out", on_click=answer, args=(False,))


def computer_score(pair: attack.Neighbours, laws: attack.Laws, b: Budget, calibration: str) -> attack.GameScore:
    rng = np.random.default_rng()
    rounds = []
    for _ in range(COMPUTER_ROUNDS):
        r = attack.draw_round(pair, b, rng, calibration)
        rounds.append(dataclasses.replace(r, guess=attack.likelihood_guess(laws.release, r.value)))
    return attack.score(rounds, b.epsilon_total, b.delta_total)


def right(s: attack.GameScore) -> str:
    """A score in one form for the student and the computer: the share right, then the count."""
    return f"{percent((s.tp + s.tn) / s.rounds)} ({s.tp + s.tn} of {s.rounds})"


def game_results(s: attack.GameScore, computer: attack.GameScore | None) -> None:
    chart(game_figure(s, computer), "attack_game", height=460)
    items = [("Your guesses right", right(s) if s.rounds else "none yet", "Rounds guessed right, of those guessed")]
    if computer is not None:
        items.append(("The computer's", right(computer), "The likelihood-ratio guesser's rounds right"))
    items.append(("Best the guarantee allows", percent(s.best), "(e^ε + δ)/(1 + e^ε)"))
    metric_row(items)
    shown = [(name, x) for name, x in (("your", s), ("the computer's", computer)) if x is not None and x.rounds]
    for name, x in shown:
        lb = "no evidence of any ε above 0" if not math.isfinite(x.epsilon_lb) or x.epsilon_lb <= 0 else \
            f"ε ≥ {fixed(x.epsilon_lb, 2)}"
        st.caption(f"What {name} guesses prove about the release, at 99.9 % confidence (the privacy audit's "
                   f"Clopper–Pearson bound): {lb}, against the claimed ε = {x.epsilon:g}.")


# ---------------------------------------------------------------- the baselines


def baselines(pair: attack.Neighbours, b: Budget, plan: ReleasePlan, row: int) -> None:
    st.markdown(tagged("### What the same ε buys from each method"))
    st.caption("Each method releases the coefficient at the same total (ε, δ), on P and on P′ with the same noise "
               "draws, so the gap between the two clouds is the row's trace and their spread is the noise.")
    draws = int(st.number_input("Draws per data set", min_value=5, max_value=MAX_DRAWS, value=20, step=5,
                                key="attack_draws", help="DP-SGD takes about a fifth of a second a draw"))
    record = keys.attack_record(plan, row)
    key = (draws, params.get("noise_seed"))
    if st.button("Draw the baselines", key="attack_baselines"):
        with st.spinner("Drawing every method on both data sets…"):
            try:
                pairs = attack.baseline_pairs(pair, b, BASELINES, draws, params.get("noise_seed"),
                                              params.get("calibration"))
            except PspError as exc:
                st.error(message(exc))
                return
        record = dataclasses.replace(record, baselines=(key, pairs))
        keys.ATTACK.set(record)
    if record.baselines is None or record.baselines[0] != key:
        st.caption("Press **Draw the baselines**: it runs every method on both data sets, which takes a while.")
        return
    pairs = record.baselines[1]
    chart(baseline_figure(pairs), "attack_baselines_figure", restyle=False)
    data_table(baseline_table(pairs), hide_index=True, key="attack_baselines_table")


def baseline_table(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    rows = []
    for method, (p, q) in pairs.items():
        both = np.isfinite(p) & np.isfinite(q)
        gap = float(np.median(np.abs(p[both] - q[both]))) if both.any() else math.nan
        spread = float(np.std(p[np.isfinite(p)], ddof=1)) if np.isfinite(p).sum() > 1 else math.nan
        # Three significant digits: a noise sd of 0.0004 and a gap of 0.0001 must read as numbers, not as zeros.
        rows.append({"method": METHOD_LABELS[method], "noise sd": f"{spread:.3g}", "median paired gap": f"{gap:.3g}",
                     "gap / sd": f"{gap / spread:.3g}" if spread > 0 else "—",
                     "released": f"{int(np.isfinite(p).sum())} of {p.size}"})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- page


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("The attacker's view")
    if params.is_publish():
        st.info("The attacker's view reads the data with and without a row, which no release may show: it is "
                "available in teaching mode only.", icon=":material/school:")
        return
    st.caption("Everything on this page is computed from the data without privacy, for teaching: it shows what the "
               "guarantee hides. Plain Algorithm 5 (the fallback's objective perturbation is among the baselines).")
    try:
        problem = loaded.problem()
        problem.require_memory()
        u, name = release.target(problem)
        b = budget_setting()
        row = chosen_row(problem)
        plan = release.plan(problem, b)
        target = plan.target
        pair = cache.neighbours(loaded.data_spec(), loaded.model_spec(), target, row, problem)
        laws = cache.laws(loaded.data_spec(), loaded.model_spec(), target, row, b, params.get("calibration"), pair)
    except PspError as exc:
        st.error(message(exc))
        return
    pair_summary(pair, f"`{name}`")
    stages(laws)
    privacy_loss(laws, b)
    game(pair, laws, b, plan, row)
    baselines(pair, b, plan, row)


main()
