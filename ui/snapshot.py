"""The teaching snapshot: a teaching run as a small markdown file, NOT private and labelled so on its first line.

Unlike the Report's format, it lists every number of the run, each computed from the data without privacy
(core.privacy.marks) marked [NOT PRIVATE], and makes no privacy claim. Text only: nothing here draws on the page.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import TYPE_CHECKING

import numpy as np

from core.privacy.marks import not_private
from ui.format import num
from ui.formulas import FIT, STAGES, Stage

if TYPE_CHECKING:
    from core.data import Dataset
    from core.mechanisms.pipeline import Problem
    from ui.release import TeachingRun

MARK = " [NOT PRIVATE]"


def snapshot_label(seed: int | None) -> str:
    """The snapshot's first line: what it is, on its face."""
    noise = "fresh OS noise" if seed is None else f"noise seed {seed}"
    return f"TEACHING — NOT PRIVATE, NOT CHARGED, {noise}"


def snapshot_name(name: str) -> str:
    """The file name, teaching_snapshot_<coefficient>.md, with the coefficient's name made safe."""
    return f"teaching_snapshot_{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_') or 'u'}.md"


def snapshot_value(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return num(float(value))
    if isinstance(value, (tuple, list, np.ndarray)):
        return "[" + ", ".join(snapshot_value(v) for v in value) + "]"
    return str(value)


def snapshot_rows(result: object) -> list[str]:
    """One line per field of a result dataclass, the non-private ones (core.privacy.marks) marked as such."""
    hidden = not_private(result)
    return [f"- {f.name} = {snapshot_value(getattr(result, f.name))}" + (MARK if f.name in hidden else "")
            for f in fields(result)]


def stage_rows(stage: Stage, rec: TeachingRun, problem: Problem) -> list[str]:
    """The snapshot's lines for one stage: the fit's main numbers, or every field of the stage's result."""
    f = problem.fit
    if stage is FIT:
        return [
            f"- theta = {snapshot_value(f.theta)}{MARK}",
            f"- lambda_min(P_n) = {num(f.lambda_min)}{MARK}",
            f"- lambda_max(P_n) = {num(f.lambda_max)}{MARK}",
            f"- kappa = {num(f.kappa)}{MARK}",
        ]
    result = getattr(rec.run, stage.key)
    return ["- not reached: λ̂min = 0"] if result is None else snapshot_rows(result)


def teaching_snapshot(rec: TeachingRun, problem: Problem, data: Dataset) -> str:
    """A teaching run as a small markdown file, unlike the Report's format and labelled on its first line."""
    run, b, f, g = rec.run, rec.plan.budget, problem.fit, problem.geometry
    if rec.plan.seed is None:
        noise = ("fresh noise from the operating system; the run was charged to no ledger and can be drawn again "
                 "at will, so picking among draws spends privacy that nothing counts")
    else:
        noise = f"seed {rec.plan.seed}; anyone who knows the seed can replay the draw and subtract the noise"
    lines = [
        snapshot_label(rec.plan.seed),
        "",
        "A teaching run of Algorithm 5 (Asi, Duchi & Talwar 2025) saved from the Pipeline page. It is NOT a "
        "release and must not be shared as a result: it was charged to no privacy budget, and it lists numbers "
        "computed from the data without privacy, each marked [NOT PRIVATE]. A value for stakeholders comes only "
        "from Publish mode (the sidebar's Mode, then Release on the Pipeline page) and is shown on the Report page.",
        "",
        "## Settings",
        "",
        f"- data: {data.source} [NOT PRIVATE: may hold counts of the raw data]; n = {f.n:,}, d = {f.d}",
        f"- model: loss {g.loss.name}, domain {g.domain}, λ_reg = {f.lam_reg:g}",
        f"- coefficient: {rec.plan.name}, u = {snapshot_value(run.u)}",
        f"- budget setting (not charged): ε = {b.epsilon_total:g}, δ = {b.delta_total:g}, {b.accounting} accounting, "
        f"split a : b : c = {' : '.join(f'{w:g}' for w in b.split)}",
        f"- calibration: {rec.plan.calibration}; interval level {rec.plan.level:.0%}",
        f"- noise: {noise}",
        "",
        "## Numbers of this run",
        "",
    ]
    for stage in STAGES:
        lines += [f"### {stage.title}" + (MARK if stage is FIT else ""), "", *stage_rows(stage, rec, problem), ""]
    return "\n".join(lines)
