"""Every session entry of the app, typed and listed once.

A setting lives in the session under its own name (ui.params.PARAMS). Everything else the session holds is an
`Entry` below — the app's own records, each with its type and who writes it — or a widget's key in `WIDGETS`.
Nothing else is stored (tests/test_keys.py reads every key the code uses). Noise is kept only in a session's own
records, never in a cache another session could read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import streamlit as st

if TYPE_CHECKING:
    from core.data.spec import DataSpec
    from core.estimator.model import ModelSpec
    from core.methods.compare import Comparison
    from core.plan import ReleasePlan
    from core.teaching.attack import GameScore, Round
    from ui.loaded import Upload
    from ui.release import PublishedRelease, TableRecord, TeachingRun

T = TypeVar("T")


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One session entry: its key, and what it holds in words (who writes it, how long it is kept)."""

    key: str
    holds: str

    def get(self) -> T | None:
        return st.session_state.get(self.key)

    def set(self, value: T) -> T:
        st.session_state[self.key] = value
        return value

    def pop(self) -> T | None:
        return st.session_state.pop(self.key, None)

    def setdefault(self, value: T) -> T:
        return st.session_state.setdefault(self.key, value)


@dataclass(frozen=True)
class ComparisonRecord:
    """The Compare page's last comparison: the plan every method released (its target, budget, calibration, level
    and seed), the methods and their draws, and the result (shown only while they hold)."""

    plan: ReleasePlan
    methods: tuple[str, ...]
    trials: int
    result: Comparison


@dataclass(frozen=True)
class AttackRecord:
    """The attacker's view's game (guessed rounds, the round waiting for a guess, the computer's score) and its
    baselines (with the draws and seed they were drawn with), for one plan and one row (shown only while they hold).
    The secret of a waiting round stays on the server."""

    plan: ReleasePlan
    row: int
    rounds: tuple[Round, ...] = ()
    pending: Round | None = None
    computer: GameScore | None = None
    baselines: tuple[tuple, dict] | None = None


IGNORED: Entry[list[str]] = Entry(
    "ignored_link_values", "link values that cannot be used, each replaced by its default (a notice, shown once)")
UPLOAD: Entry[Upload] = Entry("upload", "the uploaded file (the Data page)")
CODEBOOK: Entry[tuple[str, bytes]] = Entry("codebook", "the codebook file uploaded beside it: (its name, its bytes)")
UPLOADED: Entry[dict[tuple[DataSpec, ModelSpec | None], Any]] = Entry(
    "uploaded", "the upload's data set and fits, kept in its own session only (never a process-wide cache)")
PUBLISHED: Entry[dict[tuple[DataSpec, ModelSpec], PublishedRelease]] = Entry(
    "published", "charged releases by (data, model), made only by ui.release.publish (the Report shows nothing else)")
TEACHING_RUN: Entry[TeachingRun] = Entry(
    "teaching_run", "the Pipeline's last teaching draw: never charged, possibly seeded, never on the Report; shown "
    "again while its plan holds (noise is drawn only when asked)")
TABLE: Entry[TableRecord] = Entry(
    "table", "the Pipeline's last regression table (drawn in teaching mode, or charged in publish mode)")
COMPARISON: Entry[ComparisonRecord] = Entry("comparison", "the Compare page's last comparison")
ATTACK: Entry[AttackRecord] = Entry("attack", "the attacker's view's game and baselines")
ANALYST: Entry[str] = Entry("analyst", "the signed-in analyst's name, never a key (ui.access)")
SIGNED_OUT: Entry[str] = Entry("signed_out", "why the analyst was signed out or a sign-in failed (shown once)")
PLANNER_SEARCHED: Entry[tuple] = Entry(
    "planner_searched", "the (assumptions, target) of the Planner's last PLD search for ε asked for")

ENTRIES = (IGNORED, UPLOAD, CODEBOOK, UPLOADED, PUBLISHED, TEACHING_RUN, TABLE, COMPARISON, ATTACK, ANALYST, SIGNED_OUT,
           PLANNER_SEARCHED)

WIDGETS: dict[str, str] = {  # every widget's key but the settings' own (a settings widget uses its setting's name)
    # value widgets, read on later runs
    "table_names": "list[str]: the regression table's coefficients", "upload_file": "UploadedFile",
    "response_choice": "str | None: the upload's label column, copied to the setting response",
    "experiments_upload_<figure>": "UploadedFile: the Experiments page's uploader, one per figure",
    "attack_pick": "bool: the attacker's view picks the row", "attack_row": "int: its number",
    "attack_draws": "int: the baselines' draws per data set", "planner_search_pld": "bool",
    "planner_<assumption>": "number or choice: the Planner's n, d, loss, curvature, κ, λs and target (no data)",
    "access_key": "str: the sign-in form's key field, emptied by its own callback",
    "census_sample_rows": "int: the size of the SYNTHETIC census sample a click makes, copied to census_sample",
    "lmin_steps": "bool", "lmax_steps": "bool", "formulas: <title>": "bool: an expander open (drawn only then)",
    "whatif_margin": "bool", "whatif_region": "bool", "privacy_profile": "bool", "lmin_details": "bool",
    "lmax_details": "bool", "test_details": "bool", "release_details": "bool", "settings_panel": "bool",
    "planner_frontier": "bool", "planner_table": "bool: the Planner's table search opened",
    # buttons, downloads and tables: their value lasts one run
    "codebook_file": "file uploader: the codebook, copied to codebook",
    "experiments_figure": "str: the Experiments page's chosen tab (only its panel runs)",
    "certify": "button", "release": "button", "certify_table": "button", "release_table": "button",
    "close_<certification>": "button",
    "fresh_noise": "button", "resample": "button", "make_census_sample": "button", "use_census_files": "button",
    "run_comparison": "button", "sign_out": "button",
    "login": "button (st.login)", "attack_draw": "button", "attack_in": "button", "attack_out": "button",
    "attack_reset": "button", "attack_computer": "button", "attack_baselines": "button",
    "teaching_snapshot": "download", "reproduce_script": "download", "reproduce_notebook": "download",
    "report_script": "download", "compare_csv": "download", "<figure>_svg": "download (ui.charts.sketch)",
    "experiments_quick_<figure>": "button", "compare_table": "table", "compare_vector_table": "table",
    "attack_baselines_table": "table", "experiments_table_<key>_<figure>": "table", "data_histogram": "chart",
    "pld_total": "bool: the budget card shows the PLD total",
    "report_actions": "container: the Report's row of downloads, left off paper (pages.report.PRINT_CSS)",
}


def attack_record(plan: ReleasePlan, row: int) -> AttackRecord:
    """The kept game and baselines if drawn for this plan and row, else a fresh record."""
    record = ATTACK.get()
    return record if record is not None and (record.plan, record.row) == (plan, row) else AttackRecord(plan, row)


def comparison(plan: ReleasePlan, methods: tuple[str, ...], trials: int) -> Comparison | None:
    """The last comparison, if it was made for exactly this plan, these methods and draws."""
    record = COMPARISON.get()
    kept = record is not None and (record.plan, record.methods, record.trials) == (plan, methods, trials)
    return record.result if kept else None
