"""A published document in words and as a self-contained HTML page: pure functions of core.report's dictionary.

The Report page lays these out; its downloads are these same words. The dictionary holds private values and public
settings only (core.report.private_report), so nothing here can reach for a number computed without privacy.
"""

from __future__ import annotations

import html
import math
from datetime import UTC, datetime

from core.data.spec import SYNTHETIC_CENSUS
from core.privacy.gaussian import exp_magnitude
from core.report import PRINT_STYLE, interval_scope, plain_summary, plain_table_summary, together
from ui.format import interval, num, released_what
from ui.formulas import (
    ACCOUNTINGS,
    BUDGET_STAGES,
    CALIBRATIONS,
    LAMBDA_MAX,
    LAMBDA_MIN,
    RELEASE,
    RELEASE_COST,
    TEST,
    Stage,
)
from ui.svg import forest_figure

# The data a row belongs to, in the privacy unit's sentence.
DATA_WORDS = {"synthetic_robust": "synthetic", "synthetic_logistic": "synthetic", "acs": "census", "upload": "uploaded"}


# ---------------------------------------------------------------- wording


def coefficient(rep: dict) -> str:
    """The coefficient's name, or the direction u as a combination of the features."""
    c, names = rep["coefficient"], rep["data"]["feature_names"]
    if sum(w != 0 for w in c["u"]) == 1 and max(c["u"]) == 1:  # e_j
        return c["name"]
    terms = " + ".join(f"{w:.3g}·{f}" for w, f in zip(c["u"], names, strict=True) if w != 0)
    return f"{c['name']} (u = {terms})"


def headline(rep: dict) -> tuple[str, str]:
    """The released value and its private interval, or ⊥ and why."""
    r = rep["release"]
    if r["status"] not in ("released", "fallback"):
        return "⊥", f"Nothing was released: {r['reason']}."
    branch = "" if r["status"] == "released" else " · released by objective perturbation (the fallback)"
    return num(r["value"]), f"{r['interval_level']:.0%} private interval {interval(r['interval'])}{branch}"


def factor(epsilon: float) -> str:
    """exp(ε) in words, never an overflow (core.privacy.gaussian.exp_magnitude)."""
    return f"exp(ε) ≈ {exp_magnitude(epsilon)}"


def document_total(rep: dict) -> tuple[float, float, int]:
    """(ε, δ, k): what every release this document prints costs together (basic composition), k of them: the release
    itself, and every charged release on these people its ledger section lists with its value."""
    history = (rep.get("ledger") or {}).get("history") or []
    if not history:
        return rep["guarantee"]["epsilon"], rep["guarantee"]["delta"], 1
    return math.fsum(e["epsilon"] for e in history), math.fsum(e["delta"] for e in history), len(history)


def guarantee(rep: dict) -> str:
    g, r = rep["guarantee"], rep["release"]
    total_e, total_d, k = document_total(rep)
    if k > 1:  # the ledger section prints the other releases' values too: the document's guarantee is their total
        text = (
            f"This release is (ε, δ) = ({g['epsilon']:g}, {g['delta']:g})-differentially private; with the {k - 1} "
            f"other release{'s' if k > 2 else ''} on these people this report also prints, everything in it is "
            f"({total_e:g}, {total_d:.3g})-differentially private (basic composition): replacing any one row of the "
            f"data by any other changes the probability of every possible output of this report by at most a factor "
            f"{factor(total_e)}, plus δ."
        )
    else:
        text = (
            f"(ε, δ) = ({g['epsilon']:g}, {g['delta']:g})-differentially private: replacing any one row of the data "
            f"by any other changes the probability of every possible output of this report by at most a factor "
            f"{factor(g['epsilon'])}, plus δ."
        )
    if r["interval"] is None:
        return text
    if r["status"] == "fallback":
        return f"{text} The test (14) failed ({r['reason']}), so the value was released by objective perturbation " \
            f"(15) on the budget the run had not spent; the total guarantee is the same. {r['interval_note']}"
    # Rounded down: the stated coverage must stay a lower bound.
    coverage = math.floor(rep["interval_coverage"] * 1e4) / 1e2
    return text + (
        f" The {r['interval_level']:.0%} interval uses private values only and covers uᵀθ(Pₙ), the coefficient "
        f"fitted on all n rows (not a population value), with probability at least {coverage:g}%."
    )


def privacy_unit(rep: dict, source: str = "") -> str:
    """Whom the guarantee protects, in words: a person (filling one row, or up to k) or a row (of the data source
    named by the setting source)."""
    unit = rep["privacy_unit"]
    k = unit["max_rows_per_person"]
    # a SYNTHETIC census sample's persons are made up: its document's source says so first (core.data.spec)
    person = "a made-up person (SYNTHETIC data: no real person)" if str(rep["data"].get("source", "")).startswith(
        SYNTHETIC_CENSUS) else "a person"
    if unit["unit"] == "person" and k == 1:
        return f"Privacy unit: {person}. Each person fills at most one row, so the guarantee above holds per person."
    if unit["unit"] == "person":
        return (
            f"Privacy unit: {person}. The sample was drawn with replacement: one person fills up to {k} rows, so per "
            f"person the guarantee is (kε, δ_k) = ({unit['epsilon_per_person']:g}, {unit['delta_per_person']:.3g}) "
            f"by group privacy, with k = {k}."
        )
    data = f"the {DATA_WORDS[source]} data" if source in DATA_WORDS else "the data"
    return (
        f"Privacy unit: a row. The guarantee is per row of {data}; if one person can fill several rows, "
        "it holds per person only by group privacy."
    )


def test_outcome(rep: dict) -> str:
    t = rep["test"]
    verdict = "passed" if t["passed"] else "failed"
    if t["value"] is None:  # the ratio bound could not be formed
        return f"{verdict}: {t['reason']}"
    return f"{verdict}: ratio bound {num(t['value'])} against the threshold {num(t['threshold'])}"


def certificates(rep: dict) -> list[tuple[str, str]]:
    lmax = rep["lambda_max"]
    return [
        (LAMBDA_MIN.name, f"{num(rep['lambda_min']['lambda_hat'])}: certified lower bound on the Hessian's smallest "
                  "eigenvalue (Algorithm 2)"),
        (LAMBDA_MAX.name, "not computed, as λ̂min = 0" if lmax is None
         else f"{num(lmax['lambda_hat'])}: certified upper bound on its largest eigenvalue (Algorithm 4)"),
        (TEST.name.capitalize(), test_outcome(rep)),
    ]


def stage_cost(rep: dict, stage: Stage) -> str:
    """A budget stage's (ε, δ) as the report states it."""
    cost = rep["method"]["stages"][stage.key]
    note = f"; the release costs {RELEASE_COST}" if stage is RELEASE else ""
    return f"ε{stage.share} = {cost['epsilon']:.4g}, δ{stage.share} = {cost['delta']:.3g}{note}"


def method(rep: dict) -> list[tuple[str, str]]:
    m, r = rep["method"], rep["release"]
    branch = ("Algorithm 5's Gaussian release" if r["status"] == "released" else
              f"objective perturbation (15), the fallback, with λ = {r['fallback_lambda_reg']:.3g} and noise scale "
              f"s = {r['fallback_noise_scale']:.3g}" if r["status"] == "fallback" else "none (⊥)")
    return [
        ("Algorithm", m["algorithm"]),
        ("Branch taken", branch),
        ("Calibration", CALIBRATIONS[m["calibration"]]),
        ("Accounting", ACCOUNTINGS[m["accounting"]]),
        *((s.short, stage_cost(rep, s)) for s in BUDGET_STAGES),
    ]


def settings(rep: dict) -> list[tuple[str, str]]:
    d = rep["data"]
    domain = "cube [−1, 1]ᵈ" if d["domain"] == "cube" else f"ball ‖x‖₂ ≤ {d['radius']:g}"
    return [
        ("Coefficient", coefficient(rep)),
        ("Loss", d["loss"]),
        ("Domain", f"{domain}; rows outside it, if any, are projected onto it"),
        ("λ_reg", f"{d['lambda_reg']:g}"),
    ]


# ---------------------------------------------------------------- HTML


STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2933; margin: 0; }
main { max-width: 820px; margin: 32px auto; padding: 0 24px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; color: #0072B2; }
.sub { color: #52606d; margin: 0 0 20px; }
.result { border: 2px solid #0072B2; border-radius: 8px; padding: 16px 20px; }
.value { font-size: 32px; font-weight: 600; } .note { color: #52606d; }
.guarantee { background: #eef6fb; border-radius: 8px; padding: 12px 16px; }
.unit { border-left: 4px solid #0072B2; padding: 4px 12px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid #e4e7eb; }
th { width: 190px; font-weight: 600; white-space: nowrap; }  /* a charge's time on one line, on paper too */
.card { margin: 0 0 8px; }
h2.appendix { font-size: 20px; color: #1f2933; margin-top: 40px; border-top: 1px solid #e4e7eb; padding-top: 16px; }
@media print { h2.appendix { break-before: page; page-break-before: always; } }
""" + PRINT_STYLE


def permanent(doc: dict) -> str:
    """The document's permanent address on its server, as a line of the HTML page (none for a document without)."""
    if not doc.get("address"):
        return ""
    link = html.escape(doc["address"])
    return f'<p class="sub">Permanent address: <a href="{link}">{link}</a></p>'


def table(rows: list[tuple[str, str]]) -> str:
    return "<table>" + "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows) \
        + "</table>"


def report_html(rep: dict, source: str = "") -> str:
    """A self-contained page (inline style, no scripts or links) with the same content as the screen."""
    value, detail = headline(rep)
    e = html.escape
    r = rep["release"]
    scope = "" if r["interval"] is None else f'<p class="note">{e(interval_scope(r))}</p>'
    population = "" if not r.get("population") else (
        f'<p class="note">Population range {e(interval(r["population"]["interval"]))}: '
        f'{e(r["population"]["note"])}.</p>')
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Private release: {e(coefficient(rep))}</title>
<style>{STYLE}</style></head><body><main>
<h1>Private release of one regression coefficient</h1>
<p class="sub">{e(rep['data']['source'])} · n = {rep['data']['n']:,}, d = {rep['data']['d']}</p>{permanent(rep)}
<div class="result"><div class="note">Released value of {e(coefficient(rep))}</div>
<div class="value">{e(value)}</div><div>{e(detail)}</div></div>
<section class="card"><h2>Summary</h2><ul>{"".join(f"<li>{e(line)}</li>" for line in summary(rep))}</ul></section>
<h2 class="appendix">Technical appendix</h2>{scope}{population}
<section class="card"><h2>Guarantee</h2><p class="guarantee">{e(guarantee(rep))}</p>
<p class="unit">{e(privacy_unit(rep, source))}</p>
<p class="unit">The guarantee rests on: {e(" ".join(rep.get("assumptions") or ()))}</p></section>
<section class="card"><h2>Certificates and test</h2>{table(certificates(rep))}</section>
<section class="card"><h2>Method</h2>{table(method(rep))}</section>
<section class="card"><h2>Settings</h2>{table(settings(rep))}</section>
<section><h2>Privacy ledger</h2>{table(ledger_rows(rep))}</section>
</main></body></html>
"""


# ---------------------------------------------------------------- the ledger


def shown_time(moment: datetime) -> str:
    """A charge's time as people read it, such as "2026-11-25 22:31 UTC": short enough for the printed ledger's
    first column (the report's JSON keeps the full ISO time)."""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def ledger_rows(rep: dict, spent: str = "Spent on these people when this was published") -> list[tuple[str, str]]:
    """A document's ledger of its people (as it stood when it was published, unless spent says otherwise)."""
    g = rep["ledger"]
    rows = [(spent, f"ε = {g['spent_epsilon']:g}, δ = {g['spent_delta']:g}")]
    if "cap_epsilon" in g:  # an account of now (no document's): the cap and what remains
        rows += [("Cap (the data curator's)", f"ε = {g['cap_epsilon']:g}, δ = {g['cap_delta']:g}"),
                 ("Remaining", f"ε = {g['remaining_epsilon']:g}, δ = {g['remaining_delta']:g}")]
    for h in g["history"]:
        what = h.get("outcome", "charged")
        value = "" if h.get("value") is None else f": {num(h['value'])} {interval(h['interval'])}"
        when = shown_time(datetime.fromisoformat(h["time"]))
        by = f" · by {h['by']}" if h.get("by") else ""
        rows.append((when, f"{released_what(h.get('coefficient', ''))} · ε = {h['epsilon']:g}, δ = {h['delta']:g} · "
                           f"{what}{value}{by}"))
    return rows


def _total(rep: dict) -> tuple[float, float, str]:
    """The budget of everything the document prints and whose: per person when the ledger's charges (per person) or
    the sample's group privacy say so, else per row."""
    total_e, total_d, k = document_total(rep)
    unit = rep["privacy_unit"]
    if k == 1 and unit["unit"] == "person":
        total_e, total_d = unit["epsilon_per_person"], unit["delta_per_person"]
    return total_e, total_d, "person" if unit["unit"] == "person" or k > 1 else "row"


def summary(rep: dict) -> list[str]:
    """The first screen's sentences (core.report.plain_summary) at the budget of everything the document prints."""
    return plain_summary(rep, *_total(rep))


def table_summary(doc: dict) -> list[str]:
    """A table's first screen in words (core.report.plain_table_summary) at the budget of everything it prints."""
    return plain_table_summary(doc, *_total(doc))


# ---------------------------------------------------------------- a regression table


def table_rows(doc: dict) -> list[tuple[str, str]]:
    return [(r["name"], f"{num(r['value'])} {interval([r['low'], r['high']])}") for r in doc["table"]["rows"]]


def table_guarantee(doc: dict) -> str:
    g, t = doc["guarantee"], doc["table"]
    text = (f"(ε, δ) = ({g['epsilon']:g}, {g['delta']:g})-differentially private, for the whole table: replacing any "
            f"one row of the data by any other changes the probability of every possible table by at most a factor "
            f"{factor(g['epsilon'])}, plus δ.")
    total_e, total_d, k = document_total(doc)
    if k > 1:  # the ledger section prints the other releases' values too: the document's guarantee is their total
        text += (f" With the {k - 1} other release{'s' if k > 2 else ''} on these people this report also prints, "
                 f"everything in it is ({total_e:g}, {total_d:.3g})-differentially private (basic composition).")
    if t["status"] == "bottom":
        return text
    return text + f" {t['interval_note']} The intervals use private values only; they are for the coefficients " \
        "fitted on all n rows, not population values."


def table_html(doc: dict, source: str = "") -> str:
    """The table's self-contained page: its rows, the guarantee and the ledger, as on the screen."""
    e = html.escape
    t = doc["table"]
    released = t["status"] != "bottom"
    rows = table(table_rows(doc)) if released else f"<p>Nothing was released (⊥): {e(t['reason'])}.</p>"
    figure = forest_figure(t["rows"], t["level"], None, together(t)).svg(standalone=True) if released else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Private regression table</title>
<style>{STYLE}</style></head><body><main>
<h1>Private regression table</h1>
<p class="sub">{e(doc['data']['source'])} · n = {doc['data']['n']:,}, d = {doc['data']['d']}</p>{permanent(doc)}
<section class="card"><h2>Coefficients (value and interval)</h2>{rows}{figure}</section>
<section class="card"><h2>Guarantee</h2><p class="guarantee">{e(table_guarantee(doc))}</p>
<p class="unit">{e(privacy_unit(doc, source))}</p></section>
<section class="card"><h2>Method</h2><p>{e(doc['method']['algorithm'])}.</p></section>
<section><h2>Privacy ledger</h2>{table(ledger_rows(doc))}</section>
</main></body></html>
"""
