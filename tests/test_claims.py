"""The register of claims (core.claims): every sentence the reader-facing templates render, on real releases of every
branch, names its source; every source is a heading of its file, of the kind's file; no claim is dead."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from core.claims import CLAIMS, Claim, sentences, source_of
from core.data.synthetic import synthetic
from core.mechanisms.fallback import interval_note
from core.mechanisms.inference import POPULATION_NOTE
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.release import ALGORITHM5_NOTE, BOTTOM_NOTE, FITTED, RIDGE
from core.mechanisms.table import EACH, TOGETHER, release_table
from core.privacy.accounting import make_budget
from core.report import (
    first_sentence,
    interval_scope,
    plain_summary,
    plain_table_summary,
    private_report,
    release_document,
    table_document,
    table_note,
)

ROOT = Path(__file__).resolve().parents[1]
SPLIT, DELTA = (1, 1, 18), 1e-6


def problem(n: int, loss: str, theta_norm: float, seed: int, shuffle: int | None = None):
    """Two features; `shuffle` names a column whose rows are permuted, so that its coefficient is near 0."""
    data = synthetic(n, 2, loss, theta_norm=theta_norm, seed=seed)
    X = data.X.copy()
    if shuffle is not None:
        X[:, shuffle] = np.random.default_rng(0).permutation(X[:, shuffle])
    return prepare(X, data.y, loss)


def single(p, coord: int, eps: float, fallback: bool = True):
    """One release and its reader's report (which must carry interval_proven, as the run's document does)."""
    budget = make_budget(eps, DELTA, SPLIT)
    run = run_private(p, coord, budget, make_rng(0), "analytic", 0.95, fallback=fallback)
    rep = private_report(run, p.feature_names[coord], budget, "synthetic", p.n, 2, model=p.model,
                         feature_names=p.feature_names)
    assert rep["release"]["interval_proven"] == release_document(p, coord, [run])["release"]["interval_proven"]
    return run, rep


def table(p, eps: float, coverage: str, names: str = "all", fallback: bool = True):
    t = release_table(p, names, make_budget(eps, DELTA, SPLIT), make_rng(0), "analytic", 0.95, fallback, coverage)
    return t, table_document(t, "synthetic", p.n, 2, p.model, None)


def widened(doc: dict, half: float = 6.0) -> dict:
    """A copy whose fitted range runs past ±ln 100 (a logistic odds ratio read as uninformative)."""
    doc = copy.deepcopy(doc)
    if "table" in doc:
        for row in doc["table"]["rows"]:
            row["low"], row["high"] = row["value"] - half, row["value"] + half
    else:
        v = doc["release"]["value"]
        doc["release"]["interval"] = [v - half, v + half]
    return doc


def old(doc: dict) -> dict:
    """A copy as published before the fallback's intervals were proven: no interval_proven (no proven for a table)."""
    doc = copy.deepcopy(doc)
    if "table" in doc:
        del doc["table"]["proven"]
    else:
        del doc["release"]["interval_proven"]
    return doc


@dataclass(frozen=True)
class Rendered:
    runs: dict    # name -> (PrivateRun, report)
    tables: dict  # name -> (TableRelease, document)
    texts: tuple[tuple[str, str], ...]  # (where it came from, rendered text)


def render(runs: dict, tables: dict, reports: dict, documents: dict) -> tuple[tuple[str, str], ...]:
    """Every template's text on every document: the first screen, the first sentence, the scope and the notes."""
    out = []
    for name, rep in reports.items():
        r = rep["release"]
        eps = rep["guarantee"]["epsilon"]
        out += [(f"plain_summary[{name}]", s) for s in plain_summary(rep, eps, DELTA)]
        out += [(f"plain_summary[{name}, ε = 20, row]", s) for s in plain_summary(rep, 20.0, DELTA, "row")]
        out.append((f"first_sentence[{name}]", first_sentence(rep)))
        out.append((f"interval_note[{name}]", r["interval_note"]))
        if r["interval"] is not None:
            out.append((f"interval_scope[{name}]", interval_scope(r)))
        if r.get("population"):
            out.append((f"population note[{name}]", r["population"]["note"]))
    for name, doc in documents.items():
        out += [(f"plain_table_summary[{name}]", s)
                for s in plain_table_summary(doc, doc["guarantee"]["epsilon"], DELTA)]
        out.append((f"first_sentence[{name}]", first_sentence(doc)))
        out.append((f"table interval_note[{name}]", doc["table"]["interval_note"]))
    out += [(f"table_note[{name}]", table_note(t)) for name, (t, _) in tables.items()]
    for name, (run, _) in runs.items():
        r = run.release
        if r.status == "fallback":
            curvature = r.fallback_curvature if r.fallback_interval is not None else None
            out.append((f"interval_note(level, lam, c)[{name}]", interval_note(0.95, r.fallback_lambda_reg, curvature)))
    out += [("ALGORITHM5_NOTE", ALGORITHM5_NOTE), ("BOTTOM_NOTE", BOTTOM_NOTE), ("POPULATION_NOTE", POPULATION_NOTE)]
    return tuple(out)


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    big = problem(200_000, "logistic", 1.0, seed=2)  # θ* ∝ (0.34, −0.94): Algorithm 5 passes at ε = 8
    mid = problem(5_000, "logistic", 3.0, seed=1, shuffle=1)  # the fallback with a proven curvature interval
    small = problem(500, "logistic", 3.0, seed=1)  # too few rows for a curvature: the ridge coefficient's interval
    robust = problem(20_000, "robust", 1.0, seed=1)  # Algorithm 5 without odds ratios or a population range
    runs = dict(
        algorithm5=single(big, 0, 8.0), algorithm5_negative=single(big, 1, 8.0),
        algorithm5_robust=single(robust, 0, 8.0), curvature=single(mid, 0, 2.0), curvature_near_0=single(mid, 1, 2.0),
        ridge=single(small, 0, 2.0), bottom=single(small, 0, 2.0, fallback=False))
    tables = dict(
        together=table(big, 8.0, TOGETHER), each=table(big, 8.0, EACH), one=table(big, 8.0, TOGETHER, "x1"),
        fallback_together=table(mid, 2.0, TOGETHER), fallback_each=table(mid, 2.0, EACH),
        ridge_each=table(small, 2.0, EACH), bottom=table(small, 2.0, TOGETHER, fallback=False))
    reports = {name: rep for name, (_, rep) in runs.items()}
    census = copy.deepcopy(reports["algorithm5"])  # a census indicator's odds ratio, one group against another
    census["data"] |= dict(outcome="earning over $40,000", groups={"x0": ["women", "men"]})
    reports |= dict(census=census, wide=widened(reports["curvature_near_0"]),
                    old_curvature=old(reports["curvature"]), old_ridge=old(reports["ridge"]))
    documents = {name: doc for name, (_, doc) in tables.items()}
    documents |= dict(wide=widened(documents["fallback_together"]), old=old(documents["fallback_together"]))
    return Rendered(runs, tables, render(runs, tables, reports, documents))


def test_the_documents_take_every_branch(rendered):
    """The settings still reach the branches whose sentences the register must cover."""
    status = {name: (run.release.status, run.release.interval_target) for name, (run, _) in rendered.runs.items()}
    assert status == dict(
        algorithm5=("released", FITTED), algorithm5_negative=("released", FITTED),
        algorithm5_robust=("released", FITTED), curvature=("fallback", FITTED), curvature_near_0=("fallback", FITTED),
        ridge=("fallback", RIDGE), bottom=("bottom", None))
    tables = {name: (t.status, t.coverage, t.targets) for name, (t, _) in rendered.tables.items()}
    assert tables == dict(
        together=("released", TOGETHER, (FITTED, FITTED)), each=("released", EACH, (FITTED, FITTED)),
        one=("released", TOGETHER, (FITTED,)), fallback_together=("fallback", TOGETHER, (FITTED, FITTED)),
        fallback_each=("fallback", EACH, (FITTED, FITTED)), ridge_each=("fallback", EACH, (RIDGE, RIDGE)),
        bottom=("bottom", TOGETHER, ()))
    words = " ".join(text for _, text in rendered.texts)
    for branch in ("is above 0", "is below 0", "The range includes 0: in these data", "negative in the population",
                   "The range includes 0: in the population", "approximate 95%", "uninformative: from",
                   "for women are", "includes 0: sign not settled", "(the range below 0)"):
        assert branch in words, branch


def test_every_rendered_sentence_has_exactly_one_source(rendered):
    unmatched, ambiguous = [], []
    for where, text in rendered.texts:
        for s in sentences(text):
            matches = [c for c in CLAIMS if re.fullmatch(c.pattern, s)]
            if not matches:
                unmatched.append(f"{where}: {s}")
            elif len(matches) > 1:
                ambiguous.append(f"{where}: {s} ({len(matches)} claims)")
            assert source_of(s) == (matches[0] if matches else None)
    assert not unmatched, "sentences without a source:\n" + "\n".join(unmatched)
    assert not ambiguous, "sentences with more than one source:\n" + "\n".join(ambiguous)


def test_no_claim_is_dead(rendered):
    used = {source_of(s) for _, text in rendered.texts for s in sentences(text)}
    dead = [c.pattern for c in CLAIMS if c not in used]
    assert not dead, "claims no rendered sentence uses:\n" + "\n".join(dead)


def headings(path: str) -> dict[str, str]:
    """A Markdown file's headings (their text without the #'s, outside code fences) -> the text under each, up to the
    next heading of the same or a higher level."""
    lines, found, fenced = (ROOT / path).read_text(encoding="utf-8").splitlines(), [], False
    for i, line in enumerate(lines):
        fenced ^= line.startswith("```")
        m = None if fenced else re.match(r"(#{1,6}) +(.+?) *$", line)
        if m:
            found.append((i, len(m.group(1)), m.group(2)))
    out = {}
    for j, (i, level, text) in enumerate(found):
        end = next((k for k, lv, _ in found[j + 1:] if lv <= level), len(lines))
        out[text] = "\n".join(lines[i + 1:end])
    return out


def test_every_claim_names_a_heading_of_its_file_and_of_its_kind():
    files = {c.source: headings(c.source) for c in CLAIMS}
    missing = [f"{c.source}: {c.section!r}" for c in CLAIMS if c.section not in files[c.source]]
    assert not missing, "sections that are no heading of their file:\n" + "\n".join(missing)
    for c in CLAIMS:
        if c.kind == "theorem":
            assert c.source in ("docs/privacy.md", "docs/method.md"), c.pattern
        if c.kind == "measurement":
            assert c.source == "docs/experiments.md", c.pattern
    assert {c.kind for c in CLAIMS} == {"theorem", "measurement", "definition"}


def test_a_measurement_quotes_only_numbers_its_section_holds():
    """Every decimal a measurement's sentence states literally (89.2 %) is written in the section it names."""
    checked = 0
    for c in (c for c in CLAIMS if c.kind == "measurement"):
        quoted = [n.replace("\\.", ".") for n in re.findall(r"\d+\\\.\d+", c.pattern)]
        text = headings(c.source)[c.section]
        assert [n for n in quoted if n not in text] == [], c.section
        checked += len(quoted)
    assert checked >= 6  # 89.2, 87.8 and 90.5 in the population's sentence and in its note


def test_a_made_up_sentence_has_no_source():
    assert source_of("The interval covers the population coefficient with probability 0.99.") is None
    # a measured number changed in the sentence no longer matches its measurement
    real = ("approximate: it assumes the rows are a simple random sample of the population and that the logistic model "
            "holds (so that the sampling variance is uᵀH⁻¹u/n), and holds only then: off the model — sampling "
            "variances about twice what the model assumes — it covered as little as 89.2 % (87.8–90.5 %) at a stated "
            "95 %, the lowest over the misspecified populations we measured (docs/experiments.md); large-sample "
            "normal; coverage measured, not proven")
    assert source_of(real) is not None and source_of(real) == source_of(POPULATION_NOTE)
    assert source_of(real.replace("89.2 %", "94.7 %")) is None
    assert source_of(ALGORITHM5_NOTE.replace("at least", "exactly")) is None


def test_sentences_split_at_full_stops_only():
    text = ("It holds at level 0.95 under (ε, δ), e.g. for uᵀθ(Pₙ). Nothing was released: the test failed (14).\n"
            "x0: 1.5, range 1.2 to 1.8 (the range above 0). Other things equal, … by 17 (range 14.3 to 20.2).")
    assert sentences(text) == [
        "It holds at level 0.95 under (ε, δ), e.g. for uᵀθ(Pₙ).", "Nothing was released: the test failed (14).",
        "x0: 1.5, range 1.2 to 1.8 (the range above 0).", "Other things equal, … by 17 (range 14.3 to 20.2)."]
    assert sentences("  \n ") == []


def test_a_claim_refuses_a_source_or_kind_outside_the_register():
    with pytest.raises(ValueError, match="source"):
        Claim("x", "docs/benchmarks.md", "Benchmarks", "measurement")
    with pytest.raises(ValueError, match="kind"):
        Claim("x", "docs/privacy.md", "People, not rows", "opinion")
