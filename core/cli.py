"""Command line: `python -m core release ...` prints the release as one JSON document.

`release --ledger [PATH]` charges the durable ledger (`core.privacy.ledger_store`) right before the private
stages run and records the outcome on that entry afterwards; `ledger show`, `ledger set-cap` and
`ledger export` let the data's curator read it and set its caps. Bad input, and a release the
ledger refuses, end with exit status 2 and one line on stderr saying what is wrong and how to fix it.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from core.data import Dataset
from core.data.encoding import CENTRED_INTERCEPT, DEFAULT_ENCODING, ENCODINGS, RADII, RADII_WORDS
from core.data.folder import BLOCK_ROWS, FolderData
from core.data.formula import Codebook
from core.data.passes import check_scheduler
from core.data.spec import (
    MAX_SAMPLE_ROWS,
    MIN_SAMPLE_ROWS,
    SAMPLE_ROWS,
    SYNTHETIC_N,
    AcsSpec,
    CsvSpec,
    DataSpec,
    FolderSpec,
    PumsSpec,
    SyntheticCensusSpec,
    SyntheticSpec,
    data_loss,
    model_loss,
)
from core.data.synthetic import write_folder
from core.errors import InputError, LedgerUnavailable, PspError, check_seed, flag
from core.estimator.blocks import check_block_rows
from core.estimator.geometry import DOMAINS
from core.estimator.losses import LOSSES
from core.estimator.model import ModelSpec
from core.estimator.rounding import SUM_BLOCK
from core.mechanisms.dp_sgd import DPSGDConfig
from core.mechanisms.fallback import FALLBACK_CHOICES, falls_back
from core.mechanisms.pipeline import Problem, make_rng, prepare_spec
from core.mechanisms.table import COVERAGES, TOGETHER, coordinates
from core.methods.compare import EXTRA_METHODS, FULL_VECTOR_METHODS, METHODS, check_methods, compare
from core.plan import (
    ReleasePlan,
    TablePlan,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_finish_table,
    charge_and_release_table,
    execute,
    execute_table,
    preview,
    table_report,
)
from core.privacy.access import CURATOR, Analyst, Spender
from core.privacy.accounting import ACCOUNTINGS, RELEASE_SPLIT, Budget, make_budget, parse_split
from core.privacy.charge import SEEDED, default_cap, open_charged
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION, check_total_budget, delta_warning
from core.privacy.ledger import Ledger
from core.privacy.ledger_rows import iso_time, population_to_json
from core.privacy.ledger_store import POSTGRES_SCHEMES, SCHEMA_VERSION, SqliteStore, default_ledger_path, is_postgres
from core.privacy.population import SYNTHETIC_CENSUS, Population
from core.report import PUBLICATION_PATH, compare_document, first_sentence, release_document
from core.settings import check
from core.teaching.diagnosis import Projection, fit_diagnosis, projection


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def _add_data_options(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", metavar="FILE",
                     help="a file of rows, by its extension: CSV with a header (.csv), Parquet (.parquet), Stata "
                     "(.dta), SPSS (.sav), SAS (.sas7bdat) or SAS XPORT (.xpt); column y (or --response) is the "
                     "label, the rest features")
    src.add_argument("--synthetic", action="store_true", help="draw the paper's simulation (section 4.1)")
    src.add_argument("--folder", metavar="DIR",
                     help="release only: a data set larger than memory, the Parquet or CSV files of DIR (*.parquet or "
                     "*.csv, same columns) read in blocks; column y (or --response) is the label, the rest (or "
                     "--features) the features")
    p.add_argument("--features", default=None, help="--folder: the feature columns, comma-separated (default: every "
                   "column but the response)")
    p.add_argument("--block-rows", type=int, default=BLOCK_ROWS,
                   help=f"--folder: rows per block, a multiple of {SUM_BLOCK} (default {BLOCK_ROWS})")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:8786",
                   help="--folder: run the passes on this dask.distributed scheduler (default: this machine's cores)")
    src.add_argument("--acs-root", metavar="DIR", help="ACS person files: <DIR>/<year>/<horizon>/psam_pNN.csv")
    src.add_argument("--pums", metavar="FILE.csv", help="one ACS PUMS person file of your own")
    src.add_argument("--census-sample", type=int, metavar="ROWS",
                     help="a SYNTHETIC census sample of --state (made-up records in the census layout, no real "
                     f"person): ROWS records per state, {MIN_SAMPLE_ROWS} to {MAX_SAMPLE_ROWS} (the app's default "
                     f"{SAMPLE_ROWS}), made once in its own folder beside the census folder")
    p.add_argument("--state", action="append",
                   help="state code for --acs-root or --census-sample, repeatable (e.g. --state CA)")
    p.add_argument("--encoding", choices=ENCODINGS, default=DEFAULT_ENCODING,
                   help="census encoding of --acs-root, --census-sample or --pums: centred (each indicator less a "
                   f"public constant, ||x||_2 <= {RADII['centred']:g}; with lambda_reg 0 every coefficient "
                   f"but the intercept is the paper's, the intercept is {CENTRED_INTERCEPT}) or paper "
                   f"(||x||_2 <= 3); default {DEFAULT_ENCODING}")
    p.add_argument("--year", type=int, default=2018, help="ACS survey year, 2014 or later (default 2018)")
    p.add_argument("--horizon", choices=("1-Year", "5-Year"), default="1-Year", help="ACS horizon (default 1-Year)")
    p.add_argument("--download", action="store_true", help="download missing census files from the Census Bureau")
    p.add_argument(
        "--with-replacement", action="store_true",
        help="draw the census sample with replacement (n may exceed the population; a person may fill k rows "
        "and is protected by group privacy only: k eps)",
    )
    p.add_argument("--n", type=int, default=None,
                   help="sample size, at most 10^7 (and n d <= 2e8 for synthetic data): synthetic default 100000; "
                   "ACS default all")
    p.add_argument("--d", type=int, default=5, help="synthetic dimension, 1 to 200 (default 5)")
    p.add_argument("--theta-norm", type=float, default=1.0, help="synthetic ||theta*||_2 (default 1)")
    p.add_argument("--noise-scale", type=float, default=1.0, help="synthetic Laplace noise scale (default 1)")
    p.add_argument("--sample-seed", type=int, default=None, help="seed of the sample (synthetic or ACS)")
    p.add_argument("--response", default="y", help="--data: the label or response column (default y)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """The problem, the coordinate and the budget: shared by release and compare."""
    _add_data_options(p)
    p.add_argument(
        "--loss", choices=sorted(LOSSES), default=None,
        help="robust or logistic (default: logistic when the label takes two values, else robust; census data are "
        "logistic)",
    )
    p.add_argument("--coordinate", help="column index (0-based, among the features) or name (required, but for a "
                   "table: release --coordinates)")
    p.add_argument("--epsilon", type=float, required=True, help="TOTAL epsilon")
    p.add_argument("--delta", type=float, required=True, help="TOTAL delta, in (0, 0.1], well below 1/n")
    p.add_argument(
        "--split", default=None, help="weights a,b,c of eps for lambda_min, lambda_max, release (default "
        f"{','.join(f'{w:g}' for w in RELEASE_SPLIT)})"
    )
    p.add_argument(
        "--accounting", choices=ACCOUNTINGS, default="basic",
        help="how the stages meet the total: basic composition (default) or privacy-loss distributions",
    )
    p.add_argument("--lambda-reg", type=float, default=0.0, help="ridge lambda_reg in (1), from 0 to 100")
    p.add_argument("--domain", choices=DOMAINS, default=None,
                   help="the covariate domain (default: the data's, for census data the ball of the encoding's "
                   f"radius, {RADII_WORDS}, else the cube)")
    p.add_argument("--radius", type=float, default=None, help="radius R of the ball domain, from 0.01 to 1000")
    p.add_argument("--response-bound", type=float, default=None,
                   help="public bound B on |y| (robust loss): responses beyond it are clipped; default the largest "
                   "the fit certifies for n and d")
    p.add_argument(
        "--calibration", choices=CALIBRATIONS, default=DEFAULT_CALIBRATION,
        help="the Gaussian noise: the paper's closed forms (eq. (7) and (15)) or exact (analytic, the default)"
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the privacy noise (default: OS entropy)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("release", help="privately release one coefficient (Algorithm 5), or a table of several")
    _add_model_options(p)
    p.add_argument("--coordinates", default=None,
                   help="a regression table instead of --coordinate: comma-separated names or indices, or all; one "
                   "release of the same budget on the whole vector, these coordinates published, with intervals "
                   "that hold at once (see --coverage)")
    p.add_argument("--formula", default=None,
                   help='with --data and --codebook: the model as statisticians write it, e.g. "y ~ age + '
                   'C(region)": each numeric variable scaled to [-1, 1] by its public range, C(v) coded against its '
                   'first listed level, an Intercept unless "- 1"')
    p.add_argument("--codebook", metavar="FILE.csv", default=None,
                   help="with --formula: a CSV of variable,type,low,high,levels giving each variable's public facts, "
                   "numeric with its range low..high or categorical with its levels a|b|c")
    p.add_argument("--coverage", default=None, choices=COVERAGES,
                   help="a table's intervals: together (the default), all rows covered at once with probability "
                   "--level, or each, every row on its own at --level, as regression tables usually print them")
    p.add_argument("--level", type=float, default=0.95, help="interval level 1 - a (default 0.95)")
    p.add_argument("--repeat", type=int, default=1, help="run the private stages K times on one fit")
    p.add_argument("--fallback", nargs="?", const="on", default="auto", choices=FALLBACK_CHOICES,
                   help="when the test (14) fails, release by objective perturbation on the budget the run has not "
                   "spent: auto (the default, as in the app) for the logistic loss, on (also a bare --fallback), off")
    p.add_argument(
        "--ledger", nargs="?", const="", default=None, metavar="PATH",
        help="charge this durable privacy ledger (no PATH: $PSP_LEDGER or the default file); refused past its cap. "
        "Prints only the release's private document, exactly as the ledger keeps it",
    )
    p.add_argument("--as", dest="spender", default=None, metavar="ANALYST",
                   help="with --ledger: spend as this analyst, within their share (default: the curator, who holds "
                   "the ledger file)")
    phases = p.add_mutually_exclusive_group()
    phases.add_argument("--certify-first", action="store_true",
                        help="with --ledger: draw only the certificates and the test (14), charged now, and print "
                        "their private preview and the certification to finish")
    phases.add_argument("--finish", metavar="CERTIFICATION",
                        help="with --ledger: release from this open certification (same settings), charging the "
                        "release event only; each certification releases once")
    c = sub.add_parser("compare", help="every method on the same coordinate and total budget")
    _add_model_options(c)
    c.add_argument("--trials", type=int, default=10, help="noise draws per method (default 10)")
    c.add_argument(
        "--methods", default=",".join(METHODS + FULL_VECTOR_METHODS),
        help=f"comma-separated, from {', '.join(METHODS + EXTRA_METHODS + FULL_VECTOR_METHODS)}",
    )
    defaults = DPSGDConfig()
    c.add_argument("--sgd-clip", type=float, default=defaults.clip_norm, help="DP-SGD clipping norm C (default 1)")
    c.add_argument("--sgd-batch", type=int, default=defaults.batch_size, help="DP-SGD expected batch (default 1000)")
    c.add_argument("--sgd-steps", type=int, default=defaults.steps, help="DP-SGD steps T (default 1000)")
    c.add_argument("--sgd-learning-rate", type=float, default=None, help="DP-SGD step (default 1/(G1 + lambda_reg))")
    _add_ledger_commands(sub)
    _add_experiment_command(sub)
    s = sub.add_parser("synthetic", help="write a synthetic sample as CSV, or as a folder of Parquet files")
    where = s.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="output CSV path")
    where.add_argument("--folder", metavar="DIR", help="write a folder of Parquet files instead, file by file (n up to "
                       "10^10: only the disk bounds it), for release --folder")
    s.add_argument("--file-rows", type=int, default=2**20, help="--folder: rows per file (default 1048576)")
    s.add_argument("--loss", choices=sorted(LOSSES), default="robust")
    s.add_argument("--n", type=int, default=100_000)
    s.add_argument("--d", type=int, default=5)
    s.add_argument("--theta-norm", type=float, default=1.0)
    s.add_argument("--noise-scale", type=float, default=1.0)
    s.add_argument("--sample-seed", type=int, default=None)
    return parser


def _add_experiment_command(sub: argparse._SubParsersAction) -> None:
    from core.teaching.experiments import FIGURES

    e = sub.add_parser("experiment", help="reproduce a figure of the paper (docs/experiments.md)")
    e.add_argument("figure", choices=FIGURES)
    e.add_argument("--out", required=True, metavar="DIR",
                   help="writes DIR/<figure>.csv (python -m ui.experiment_figures DIR draws DIR/<figure>.html)")
    e.add_argument("--quick", action="store_true", help="few repetitions and a coarse grid (under a minute)")
    e.add_argument("--reps", type=int, default=None, help="repetitions, each on a fresh data set (default 25)")
    e.add_argument("--seed", type=int, default=0, help="root seed of every data set and every noise draw (default 0)")
    e.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    e.add_argument("--dims", default=None, help="comma-separated dimensions d, overriding the figure's")
    e.add_argument("--grid", default=None, help="comma-separated x values (n/d, n or eps), overriding the figure's")
    e.add_argument("--acs-root", default=None, metavar="DIR",
                   help="fig6/fig7: folktables' root folder with the state's census file (default: a SYNTHETIC "
                        "file written under --out)")


def _numbers(text: str | None, kind: type, what: str) -> list | None:
    if text is None:
        return None
    try:
        return [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{what} takes comma-separated numbers, got {text!r}") from None


def cmd_experiment(args: argparse.Namespace) -> dict:
    from core.teaching.experiments import run_figure

    if args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {args.jobs}")
    return run_figure(args.figure, args.out, args.quick, args.reps, args.seed, args.jobs,
                      _numbers(args.dims, int, "--dims"), _numbers(args.grid, float, "--grid"),
                      acs_root=args.acs_root)


def _add_ledger_commands(sub: argparse._SubParsersAction) -> None:
    led = sub.add_parser("ledger", help="the durable privacy ledger: show, set-cap, export")
    lsub = led.add_subparsers(dest="ledger_command", required=True, parser_class=_Parser)
    try:
        where = f"the ledger file (default $PSP_LEDGER or {default_ledger_path()})"
    except LedgerUnavailable:  # PSP_LEDGER names no ledger: the command that opens it says so, in one sentence
        where = "the ledger file (default $PSP_LEDGER)"
    show = lsub.add_parser("show", help="caps, spent and remaining per population, as JSON")
    show.add_argument("--ledger", default=None, metavar="PATH", help=where)
    cap = lsub.add_parser("set-cap", help="set the cap of census states, or the default cap")
    cap.add_argument("--epsilon", type=float, required=True, help="cap on the summed epsilon")
    cap.add_argument("--delta", type=float, required=True, help="cap on the summed delta")
    which = cap.add_mutually_exclusive_group(required=True)
    which.add_argument("--state", action="append", help="census state, repeatable: caps its ACS persons and every "
                       "SYNTHETIC census sample of it")
    which.add_argument("--default", action="store_true", help="the cap of every population without its own")
    cap.add_argument("--year", type=int, default=2018, help="ACS survey year of --state (default 2018)")
    cap.add_argument("--horizon", choices=("1-Year", "5-Year"), default="1-Year", help="ACS horizon of --state")
    cap.add_argument("--ledger", default=None, metavar="PATH", help=where)
    _add_analyst_commands(lsub, where)
    close = lsub.add_parser("close", help="close an open certification unspent (its first charge stays spent)")
    close.add_argument("certification", help="the certification's id (ledger show lists the open ones)")
    close.add_argument("--ledger", default=None, metavar="PATH", help=where)
    pub = lsub.add_parser("publications", help="every published release, newest first: its permanent address on "
                          "the app (/report?release=ID after the server's address) and its first sentence")
    pub.add_argument("--ledger", default=None, metavar="PATH", help=where)
    exp = lsub.add_parser("export", help="the whole append-only log")
    exp.add_argument("--format", choices=("json", "csv"), default="json")
    exp.add_argument("--ledger", default=None, metavar="PATH", help=where)
    move = lsub.add_parser("move", help="copy the SQLite ledger into an empty PostgreSQL ledger, in one "
                           "transaction, and check that both show the same (the file is left as it is)")
    move.add_argument("--to", required=True, metavar="URL", help="the PostgreSQL ledger, postgresql://user@host/db")
    move.add_argument("--ledger", default=None, metavar="PATH", help=where)


def _add_analyst_commands(lsub: argparse._SubParsersAction, where: str) -> None:
    who = lsub.add_parser("analyst", help="the analysts who may spend from the app: add, revoke, list")
    asub = who.add_subparsers(dest="analyst_command", required=True, parser_class=_Parser)
    add = asub.add_parser("add", help="register an analyst with a share of each people's cap; prints their access "
                          "key once (none with --email)")
    add.add_argument("name", help="1 to 64 letters, digits and . _ @ -")
    add.add_argument("--epsilon", type=float, required=True, help="their share of each people's epsilon cap")
    add.add_argument("--delta", type=float, required=True, help="their share of each people's delta cap")
    add.add_argument("--email", default=None, help="sign in through the identity provider (st.login) with this "
                     "e-mail instead of a key")
    add.add_argument("--expires-days", type=float, default=None, help="days until the access expires (default never)")
    add.add_argument("--ledger", default=None, metavar="PATH", help=where)
    revoke = asub.add_parser("revoke", help="revoke an analyst at once (what they spent stays spent)")
    revoke.add_argument("name")
    revoke.add_argument("--ledger", default=None, metavar="PATH", help=where)
    change = asub.add_parser("change", help="change an analyst's share or expiry, or reinstate a revoked one (what "
                             "they spent stays spent); every change is logged with who made it")
    change.add_argument("name")
    change.add_argument("--epsilon", type=float, default=None, help="their new share of each people's epsilon cap")
    change.add_argument("--delta", type=float, default=None, help="their new share of each people's delta cap")
    expiry = change.add_mutually_exclusive_group()
    expiry.add_argument("--expires-days", type=float, default=None, help="the access expires this many days from now")
    expiry.add_argument("--never-expires", action="store_true", help="the access no longer expires")
    expiry.add_argument("--expire-now", action="store_true", help="end the access now (as revoking does)")
    change.add_argument("--reinstate", action="store_true", help="lift a revocation")
    change.add_argument("--ledger", default=None, metavar="PATH", help=where)
    listing = asub.add_parser("list", help="every analyst, their share and state (never a key or its hash), and every "
                              "change to them with who made it")
    listing.add_argument("--ledger", default=None, metavar="PATH", help=where)


def spec_from_args(args: argparse.Namespace) -> DataSpec:
    """The data spec the data options name (a file named by --data or --pums is read for its digest)."""
    sample = dict(n=args.n, sample_seed=args.sample_seed, with_replacement=args.with_replacement,
                  encoding=args.encoding)
    if args.data is not None:
        return CsvSpec.from_path(args.data, args.response, **_formula(args))
    if getattr(args, "folder", None) is not None:
        features = None if args.features is None else tuple(c.strip() for c in args.features.split(","))
        return FolderSpec(args.folder, args.response, features, check_block_rows(args.block_rows),
                          check_scheduler(args.scheduler))
    if _formula(args):
        raise InputError("--formula and --codebook apply to a file of rows: add --data")
    if args.pums is not None:
        return PumsSpec.from_path(args.pums, **sample)
    if args.acs_root is not None:
        return AcsSpec(tuple(args.state or ()), args.year, args.horizon, args.acs_root, download=args.download,
                       **sample)
    if args.census_sample is not None:
        return SyntheticCensusSpec(tuple(args.state or ()), args.year, args.horizon, args.census_sample, **sample)
    n = SYNTHETIC_N if args.n is None else args.n
    return SyntheticSpec(args.loss or "robust", n, args.d, args.theta_norm, args.noise_scale, args.sample_seed)


def _formula(args: argparse.Namespace) -> dict:
    """release's --formula and its --codebook, read ({} without them)."""
    formula, codebook = getattr(args, "formula", None), getattr(args, "codebook", None)
    if formula is None and codebook is None:
        return {}
    if formula is None or codebook is None:
        raise InputError("--formula and --codebook go together: the codebook gives the public range or levels of "
                         "each variable the formula names")
    return dict(formula=formula, codebook=Codebook.read(codebook))


def load_dataset(args: argparse.Namespace) -> Dataset:
    """The data set the data options name."""
    return spec_from_args(args).load()


def _warn_projection(where: Projection) -> None:
    """On stderr, for the data's owner: most rows lay outside the domain, or projection made the design singular."""
    if where.advice:
        print(f"warning (not private): {where.sentence}. {where.advice}", file=sys.stderr)


def _coordinate(args: argparse.Namespace) -> str:
    if args.coordinate is None:
        raise InputError("{coordinate} names the coefficient to release (an index or a name)", "coordinate")
    return args.coordinate


def _prepared(args: argparse.Namespace) -> tuple[Budget, DataSpec, Dataset | None, Problem, int | None,
                                                 Projection | None]:
    check_total_budget(args.epsilon, args.delta)
    check_seed(args.seed, "--seed")
    budget = make_budget(args.epsilon, args.delta, parse_split(args.split), args.accounting)
    spec = spec_from_args(args)
    model_loss(spec, args.loss)  # a loss the source contradicts is refused before any row is read
    data, problem, where, notice = _loaded_problem(args, spec)
    j = None if getattr(args, "coordinates", None) is not None else problem.coordinate(_coordinate(args))
    if notice is not None:  # once the problem stands, so that a refusal stays one line
        print(f"note: {notice}", file=sys.stderr)
    warning = delta_warning(args.delta, problem.n)
    if warning is not None:  # a warning, not a refusal: the app's default delta 1e-6 is above 1/n past a million rows
        print(f"warning: {warning}", file=sys.stderr)
    return budget, spec, data, problem, j, where


def _model(args: argparse.Namespace, spec: DataSpec, loss: str) -> ModelSpec:
    return ModelSpec(loss, args.domain or spec.default_domain, args.radius, args.lambda_reg, args.response_bound)


def _loaded_problem(args: argparse.Namespace, spec: DataSpec) -> tuple[Dataset | FolderData, Problem,
                                                                       Projection | None, str | None]:
    """Stage 0 on the data, in memory or read in blocks (a folder), with what projection did to the rows (in memory
    only) and the loss's notice."""
    data = spec.load()
    loss, notice = data_loss(spec, data, args.loss)
    problem = prepare_spec(data, _model(args, spec, loss), spec)
    if isinstance(data, FolderData):
        return data, problem, None, notice
    where = projection(data.X, problem)
    _warn_projection(where)
    return data, problem, where, notice


def cmd_release(args: argparse.Namespace) -> dict | str:
    """A teaching run (no --ledger): the whole document, the fit and the other numbers computed without privacy
    marked in its not_private list. A publishing run (--ledger): the private document the ledger keeps, as it keeps
    it, and nothing else."""
    check("level", args.level, "--level")  # before anything is read, as every option (ReleasePlan checks it too)
    _check_release_options(args)
    # An unusable file is refused now, before anything is read.
    ledger = None if args.ledger is None else open_charged(args.ledger or None, default_cap())
    budget, spec, data, problem, j, where = _prepared(args)
    fallback = falls_back(args.fallback, problem.model.loss)
    if j is None:
        return _release_table(args, spec, problem, budget, fallback, ledger)
    plan = ReleasePlan(data=spec, model=problem.model, target=j, name=problem.feature_names[j], budget=budget,
                       calibration=args.calibration, level=args.level, fallback=fallback, seed=args.seed)
    if ledger is not None:  # charged per person before any noise, whether it releases or gives bottom
        return _publish(args, plan, problem, ledger)
    rng = make_rng(args.seed)
    runs = [execute(plan, problem, rng) for _ in range(args.repeat)]
    doc = release_document(problem, j, runs, spec.describe(), privacy_unit=problem.privacy_unit, noise_seed=args.seed)
    if where is not None:  # names the projection when it caused a singular design
        doc["fit"]["diagnosis"] = fit_diagnosis(problem, where)
    if data is not None and data.theta_star is not None:
        doc["theta_star"] = data.theta_star.tolist()
    return doc


def _check_release_options(args: argparse.Namespace) -> None:
    if args.repeat < 1:
        raise InputError(f"--repeat must be at least 1, got {args.repeat}")
    if args.ledger is not None and args.repeat != 1:
        raise InputError("--ledger charges one release at a time; drop --repeat or run the command again")
    if args.ledger is not None and args.seed is not None:
        raise InputError(SEEDED + ": drop --seed or --ledger")
    if (args.certify_first or args.finish or args.spender) and args.ledger is None:
        raise InputError("--certify-first, --finish and --as charge the ledger: add --ledger")
    if args.coordinates is not None:
        _check_table_options(args)
    elif args.coverage is not None:
        raise InputError("--coverage applies to a table: add --coordinates")


def _spender(args: argparse.Namespace, ledger: Ledger) -> Spender:
    """Who a publishing run spends as: the curator, who holds the file, or the analyst --as names."""
    return CURATOR if args.spender is None else ledger.analyst_spender(args.spender)


def _publish(args: argparse.Namespace, plan: ReleasePlan, problem: Problem, ledger: Ledger) -> dict | str:
    """A charged release, whole or in two phases; what is printed is private only."""
    spender = _spender(args, ledger)
    if args.certify_first:
        w = charge_and_certify(plan, problem, ledger, spender=spender)
        return dict(certification=w.certification.uid, coefficient=plan.name,
                    preview=preview(plan, problem, w.certified),
                    finish=f"run the same command with --finish {w.certification.uid} in place of --certify-first")
    if args.finish:
        _, entry = charge_and_finish(plan, problem, ledger, args.finish, spender=spender)
    else:
        _, entry = charge_and_execute(plan, problem, ledger, spender=spender)
    return entry.details.document + "\n"  # type: ignore[union-attr]


def _check_table_options(args: argparse.Namespace) -> None:
    """A table is one release of the same budget as one coefficient's, in one step or two: only --coordinate and
    --repeat do not apply."""
    if args.coordinate is not None:
        raise InputError("give --coordinate (one coefficient) or --coordinates (a table), not both")
    if args.repeat != 1:
        raise InputError("--repeat does not apply to a table: run the command again for another draw")


def _release_table(args: argparse.Namespace, spec: DataSpec, problem: Problem, budget: Budget, fallback: bool,
                   ledger: Ledger | None) -> dict | str:
    idx = coordinates(problem, args.coordinates)
    plan = TablePlan(data=spec, model=problem.model, indices=idx, names=tuple(problem.feature_names[j] for j in idx),
                     budget=budget, calibration=args.calibration, level=args.level, fallback=fallback,
                     seed=args.seed, coverage=args.coverage or TOGETHER)
    if ledger is None:
        return table_report(plan, problem, execute_table(plan, problem))
    spender = _spender(args, ledger)
    if args.certify_first:
        w = charge_and_certify(plan, problem, ledger, spender=spender)
        return dict(certification=w.certification.uid, coefficients=list(plan.names),
                    preview=preview(plan, problem, w.certified),
                    finish=f"run the same command with --finish {w.certification.uid} in place of --certify-first")
    if args.finish:
        entry = charge_and_finish_table(plan, problem, ledger, args.finish, spender=spender)[2]
    else:
        entry = charge_and_release_table(plan, problem, ledger, spender=spender)[2]
    return entry.details.document + "\n"  # type: ignore[union-attr]


def cmd_compare(args: argparse.Namespace) -> dict:
    check("trials", args.trials, "--trials")
    if args.folder is not None:
        raise InputError("--folder is read in blocks, for release only: the baselines hold every row in memory")
    methods = check_methods([m.strip() for m in args.methods.split(",") if m.strip()])
    config = DPSGDConfig(
        clip_norm=args.sgd_clip, batch_size=args.sgd_batch, steps=args.sgd_steps, learning_rate=args.sgd_learning_rate
    )
    budget, spec, data, problem, j, _ = _prepared(args)
    result = compare(problem, j, budget, args.trials, make_rng(args.seed), methods, data.theta_star,
                     args.calibration, config)
    return compare_document(problem, j, result, spec.describe())


def cmd_synthetic(args: argparse.Namespace) -> dict:
    if args.folder is not None:
        if not 1 <= args.file_rows <= 2**24:
            raise InputError(f"--file-rows must be from 1 to {2**24:,}, got {args.file_rows}")
        seed = 0 if args.sample_seed is None else args.sample_seed
        theta = write_folder(args.folder, args.n, args.d, args.loss, args.theta_norm, args.noise_scale, seed,
                             args.file_rows)
        return dict(folder=args.folder, n=args.n, d=args.d, loss=args.loss, seed=seed, theta_star=theta.tolist())
    data = SyntheticSpec(args.loss, args.n, args.d, args.theta_norm, args.noise_scale, args.sample_seed).load()
    import numpy as np

    table = np.column_stack([data.X, data.y])
    header = ",".join([*data.feature_names, "y"])
    np.savetxt(args.out, table, delimiter=",", header=header, comments="", fmt="%.17g")
    return dict(out=args.out, n=data.n, d=data.d, loss=args.loss, theta_star=data.theta_star.tolist())


def _number(x: float | None) -> float | str | None:
    """A JSON-safe number (an infinite cap as the string "inf")."""
    return "inf" if x is not None and math.isinf(x) else x


def _pair(pair: tuple[float, float] | None) -> dict | None:
    return None if pair is None else {"epsilon": _number(pair[0]), "delta": _number(pair[1])}


def _population(p: Population) -> dict:
    return {**json.loads(population_to_json(p)), "description": p.describe()}


def cmd_ledger_show(args: argparse.Namespace) -> dict:
    return _show(open_charged(args.ledger, default_cap()))


def _show(ledger: Ledger) -> dict:
    """What `ledger show` prints: the caps, and per population its cap, spent, remaining, entries, spenders and open
    certifications."""
    default, caps = ledger.caps()
    rows = []
    for part in dict.fromkeys([*ledger.parts_charged(), *(p for p in caps if not _all_samples(p))]):
        cap = ledger.cap(part) if (default is not None or part in caps) else None
        rows.append(dict(population=_population(part), cap=_pair(cap), spent=_pair(ledger.spent(part)),
                         remaining=_pair(None if cap is None else ledger.remaining(part)),
                         entries=len(ledger.entries(part)),
                         spent_by=_spent_by(ledger, part),
                         open_certifications=[dict(certification=c.uid, opened=iso_time(c.opened), summary=c.summary)
                                              for c in ledger.open_certifications(part)]))
    return dict(ledger=str(ledger), default_cap=_pair(default), populations=rows)


def _all_samples(p: Population) -> bool:
    """Whether p is every SYNTHETIC census sample of a state (`Population.census_samples_of`, the one key of that
    kind without a size): `set-cap --state` caps it for each state, so `ledger show` lists it only once charged, not
    for every capped state of a curator who never made a sample."""
    return p.kind == SYNTHETIC_CENSUS and len(p.key) == 3


def _spent_by(ledger: Ledger, part: Population) -> dict:
    """What each spender (the curator, an analyst, the server's own browser) has spent on a part."""
    names = dict.fromkeys(e.spender for e in ledger.entries(part))
    return {name: _pair(ledger.spent_by(part, name)) for name in names}


def cmd_ledger_set_cap(args: argparse.Namespace) -> dict:
    ledger = open_charged(args.ledger, default_cap())
    cap = (args.epsilon, args.delta)
    if args.default:
        ledger.set_default_cap(cap)
        return dict(ledger=str(ledger), default_cap=_pair(ledger.default_cap))
    states = tuple(s.strip().upper() for s in args.state)
    # A state names its census persons and the made-up persons of its SYNTHETIC census samples: both are capped.
    capped = [Population.census(states, args.year, args.horizon),
              *(Population.census_samples_of(s, args.year, args.horizon) for s in sorted(set(states)))]
    for population in capped:
        ledger.set_cap(population, cap)
    return dict(ledger=str(ledger), populations=[dict(population=_population(p), cap=_pair(ledger.cap(p)))
                                                 for p in capped])


def _log(ledger: Ledger) -> list[dict]:
    rows = ledger.log()
    for row in rows:
        row.pop("seq", None)
        row["key"] = json.loads(row["key"])
        row["stages"] = None if row["stages"] is None else json.loads(row["stages"])
        row["document"] = None if row.get("document") is None else json.loads(row["document"])
        row["parts"] = [json.loads(p) for p in row["parts"]]
    return rows


def cmd_ledger_export(args: argparse.Namespace) -> dict | str:
    ledger = open_charged(args.ledger, default_cap())
    rows = _log(ledger)
    if args.format == "json":
        return dict(ledger=str(ledger), entries=rows)
    out = io.StringIO()
    fields = ["uid", "time", "spender", "kind", "key", "label", "parts", "epsilon", "delta", "coefficient", "stages",
              "outcome", "value", "low", "high", "reason"]
    # The CSV is the log a row per release; each release's whole private report is in the JSON export.
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in row.items()})
    return out.getvalue()


def _analyst_dict(a: Analyst) -> dict:
    return dict(name=a.name, share=_pair(a.share), signs_in_with="e-mail" if a.email else "access key",
                email=a.email, expires=None if math.isinf(a.expires) else iso_time(a.expires), revoked=a.revoked)


def _analyst_list(ledger: Ledger) -> dict:
    """What `ledger analyst list` prints but the ledger's name: every analyst and every change to one."""
    return dict(analysts=[_analyst_dict(a) for a in ledger.analysts()],
                changes=[dict(time=iso_time(c.time), analyst=c.name, change=c.change, by=c.by)
                         for c in ledger.analyst_changes()])


def cmd_ledger_analyst(args: argparse.Namespace) -> dict:
    ledger = open_charged(args.ledger, default_cap())
    if args.analyst_command == "list":
        return dict(ledger=str(ledger), **_analyst_list(ledger))
    if args.analyst_command == "revoke":
        return dict(ledger=str(ledger), analyst=_analyst_dict(ledger.revoke_analyst(args.name)))
    if args.analyst_command == "change":
        return dict(ledger=str(ledger), analyst=_analyst_dict(_change_analyst(ledger, args)))
    expires = math.inf if args.expires_days is None else _days_from_now(args.expires_days)
    key = ledger.add_analyst(args.name, (args.epsilon, args.delta), args.email, expires)
    added = dict(ledger=str(ledger), analyst=args.name, share=_pair((args.epsilon, args.delta)))
    if key is None:
        return added | dict(signs_in_with=f"the identity provider's e-mail {args.email}")
    return added | dict(key=key, note="The key is shown this once and kept only as a salted hash: hand it to the "
                        "analyst, who enters it once per browser session (the sidebar's Analyst sign-in).")


def _days_from_now(days: float) -> float:
    if not days > 0:
        raise InputError(f"--expires-days must be a positive number of days, got {days:g}")
    return time.time() + 86_400 * days


def _change_analyst(ledger: Ledger, args: argparse.Namespace) -> Analyst:
    """`ledger analyst change`: the share (either part kept when not given), the expiry, a reinstatement."""
    found = next((a for a in ledger.analysts() if a.name == args.name), None)
    share = None
    if found is not None and (args.epsilon is not None or args.delta is not None):
        share = (found.share[0] if args.epsilon is None else args.epsilon,
                 found.share[1] if args.delta is None else args.delta)
    expires = (_days_from_now(args.expires_days) if args.expires_days is not None else math.inf if
               args.never_expires else time.time() if args.expire_now else None)
    return ledger.change_analyst(args.name, share, expires, False if args.reinstate else None)


def cmd_ledger_publications(args: argparse.Namespace) -> dict:
    ledger = open_charged(args.ledger, default_cap())
    return dict(ledger=str(ledger), publications=[
        dict(release=e.uid, address=PUBLICATION_PATH + e.uid, time=iso_time(e.time),
             population=_population(e.population), coefficient=e.details.coefficient, outcome=e.details.outcome,
             words=first_sentence(json.loads(e.details.document)))
        for e in ledger.publications()])


def cmd_ledger_close(args: argparse.Namespace) -> dict:
    ledger = open_charged(args.ledger, default_cap())
    closed = ledger.close_certification(args.certification)
    return dict(ledger=str(ledger), certification=closed.uid, state=closed.state, summary=closed.summary)


def cmd_ledger_move(args: argparse.Namespace) -> dict:
    """`ledger move --to URL`: copy the SQLite ledger, as of one moment (`_snapshot`), into an empty PostgreSQL one in
    one transaction (PostgresStore.copy_from), then check that both show, export and list their analysts alike, and
    that the file still does (a server left running may have spent meanwhile). The file is only read: one of an older
    schema, which opening would bring up to date, is refused first."""
    source = default_ledger_path() if args.ledger is None else args.ledger
    if is_postgres(source):
        raise InputError("ledger move copies an SQLite ledger file into PostgreSQL: name the file with --ledger")
    if not is_postgres(args.to, "--to"):
        raise InputError(f"--to takes a PostgreSQL URL ({' or '.join(POSTGRES_SCHEMES)}...), not a file's path")
    path = Path(source).expanduser()
    if not path.is_file():
        raise InputError(f"there is no ledger file at {path}: name the SQLite ledger to move with --ledger or "
                         "PSP_LEDGER")
    version = _file_version(path)
    if version not in (None, SCHEMA_VERSION):
        raise InputError(f"the ledger file {path} has schema version {version}: bring it to version "
                         f"{SCHEMA_VERSION} with `python -m core ledger show --ledger {path}`, then move it")
    from core.privacy.ledger_pg import PostgresStore  # psycopg is loaded only for a PostgreSQL ledger

    live, new = SqliteStore(path), PostgresStore(args.to)
    with tempfile.TemporaryDirectory() as folder:
        old = SqliteStore(_snapshot(path, Path(folder) / "ledger.sqlite3"))
        moved = new.copy_from(old)
        views = _views(Ledger(store=old))
        if _views(Ledger(store=new)) != views:
            raise LedgerUnavailable(f"the ledger {new} does not show what {live} shows after the move, so do not use "
                                    "it: empty its database and move again")
    if _views(Ledger(store=live)) != views:
        raise LedgerUnavailable(f"the ledger file {live} changed during the move, so the ledger {new} misses what "
                                "was written meanwhile: stop every server and command that uses the file, empty the "
                                "database and move again")
    return dict(ledger=str(new), moved_from=str(live), **moved,
                checked="ledger show, ledger export and ledger analyst list agree")


def _views(ledger: Ledger) -> tuple:
    """What `ledger show`, `ledger export` and `ledger analyst list` print of a ledger, but its name."""
    return _show(ledger) | {"ledger": ""}, _log(ledger), _analyst_list(ledger)


def _snapshot(path: Path, copy: Path) -> Path:
    """copy: the ledger file as of one moment (SQLite's online backup, which reads one state of it, whoever writes
    meanwhile), read without writing to the file."""
    try:
        with _read_only(path) as db, contextlib.closing(sqlite3.connect(copy)) as to:
            db.backup(to)
    except sqlite3.Error as exc:
        raise LedgerUnavailable(f"the ledger file {path} cannot be read to move it ({exc}); nothing was moved") \
            from None
    return copy


def _read_only(path: Path) -> contextlib.closing[sqlite3.Connection]:
    """A connection to the SQLite file at path that cannot write to it."""
    return contextlib.closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True))


def _file_version(path: Path) -> int | None:
    """The schema version of an SQLite ledger file, read without writing to it (None when it has none to read:
    SqliteStore then says what is wrong with it)."""
    try:
        with _read_only(path) as db:
            return db.execute("SELECT version FROM schema").fetchone()[0]
    except (sqlite3.Error, TypeError):
        return None


def cmd_ledger(args: argparse.Namespace) -> dict | str:
    commands = {"show": cmd_ledger_show, "set-cap": cmd_ledger_set_cap, "export": cmd_ledger_export,
                "close": cmd_ledger_close, "analyst": cmd_ledger_analyst, "publications": cmd_ledger_publications,
                "move": cmd_ledger_move}
    return commands[args.ledger_command](args)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        commands = {"release": cmd_release, "compare": cmd_compare, "synthetic": cmd_synthetic, "ledger": cmd_ledger,
                    "experiment": cmd_experiment}
        doc = commands[args.command](args)
    except PspError as exc:
        print(f"error: {exc.render(flag)}", file=sys.stderr)  # the command line names its options
        return 2
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    try:
        if isinstance(doc, str):  # a CSV export, or a release's document as the ledger keeps it
            sys.stdout.write(doc)
        else:
            json.dump(doc, sys.stdout, indent=2, allow_nan=False)
            sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left (`| head`): what was done stands; say nothing, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the interpreter's last flush is quiet
    return 0
