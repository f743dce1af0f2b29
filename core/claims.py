"""The register of claims: every sentence a reader sees about coverage, privacy or a measurement, with its source.

Each `Claim` is one sentence template as rendered (a regular expression over the whole sentence) and the section of
docs/privacy.md, docs/method.md or docs/experiments.md that backs it: the theorem (privacy.md, method.md), the
measurement (experiments.md), or, for a sentence that states what was done or a public fact, the section that
defines it. The templates are those of core.report (plain_summary, plain_table_summary, first_sentence,
interval_scope, table_note) and the release notes of core.mechanisms (release, fallback, inference).
tests/test_claims.py renders them on real releases of every branch and fails on a sentence no claim matches, on a
section that is not a heading of its file, and on a claim no rendered sentence uses. The patterns are literal on
purpose: a reworded sentence or a changed measured number matches nothing until its source is checked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SOURCES = ("docs/privacy.md", "docs/method.md", "docs/experiments.md")
KINDS = ("theorem", "measurement", "definition")


@dataclass(frozen=True)
class Claim:
    """One sentence template: `pattern` fully matches the rendered sentence; `section` is the exact text of a
    Markdown heading of `source` (without its #'s); `kind` says whether that section proves it (theorem), measures it
    (measurement) or defines what it states (definition)."""

    pattern: str
    source: str
    section: str
    kind: str

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"a claim's source is one of {', '.join(SOURCES)}, got {self.source!r}")
        if self.kind not in KINDS:
            raise ValueError(f"a claim's kind is one of {', '.join(KINDS)}, got {self.kind!r}")


PRIVACY, METHOD, EXPERIMENTS = SOURCES
FALLBACK = "Algorithm 5 with fallback"
CURVATURE = "Curvature at the released point"
TABLE = "A regression table (several coefficients, one release)"
COMPOSITION = "Basic composition (what the app and the command line report by default)"
TEST = "6. Stage 3: the stability test (14)"
RELEASE = "7. Stage 4: the release (Algorithm 5) and its interval"
POPULATION = "The population interval off the model, re-measured (2026-11-29)"
FORECAST = "The preview's forecast, measured (2026-11-27)"

# Pieces of the templates as they are formatted: numbers by :.3g, :g, :.2g or :.4g; levels by :.0%; odds ratios in
# words past 1,000 either way; names and reasons free text.
NUM = r"-?(?:\d+(?:\.\d+)?(?:e[+-]\d+)?|inf)"
PCT = r"\d+%"
NAME = r".+?"
REASON = r".+"
RATIO = rf"(?:over 1,000|under 1/1,000|{NUM})"
SPAN = rf"{RATIO}(?: to {RATIO})?"
WIDE = rf"uninformative: from {SPAN}"  # an odds-ratio range from below 1/100 to above 100
FACTOR = r"[\d.,]+(?: × 10[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?"  # core.privacy.gaussian.exp_magnitude
SHORT = r"the range (?:above 0|below 0|includes 0: sign not settled)"
PROVEN = (r"proven at every n: the interval is given only where the private curvature localises the fit on these "
          r"rows, which then exists")
MEASURED = (r"its coverage is measured, not proven, and fell short of the stated level on samples of a few hundred "
            r"rows: 87 to 89 % in docs/curvature_proof\.md")
OFF_MODEL = (r"off the model — sampling variances about twice what the model assumes — it covered as little as 89\.2 % "
             r"\(87\.8–90\.5 %\) at a stated 95 %, the lowest over the misspecified populations we measured "
             r"\(docs/experiments\.md\)")
FITTED = r"uᵀθ\(Pₙ\), the coefficient fitted on these n rows"
RIDGE = (r"uᵀθ_λ\(Pₙ\), the coefficient of the ridge-regularised fit on these n rows, pulled toward 0 by the ridge "
         r"\(no range for the coefficient fitted on these rows could be certified\)")
SCOPE = (r"and accounts for the privacy noise only; it is not a confidence interval for a population coefficient, "
         r"which would also have to account for the sampling variability of the n rows\.")
ESTIMATE = rf"The private estimate of the coefficient of {NAME} is {NUM}"
TABLE_ROW = (rf"{NAME} {NUM} \((?:ridge-regularised fit, {NUM} to {NUM}|{NUM} to {NUM}"
             rf"(?:, odds ratio {RATIO} \((?:{SPAN}|{WIDE})\))?)\)")
ESTIMATES = r"Private estimates of (?:1 coefficient|\d+ coefficients) for the people in these data"
COVERS = (rf"(?:The interval covers its coefficient of the fit on these rows with probability ≥ {NUM}"
          rf"|Each of the \d+ intervals covers its coefficient of the fit on these rows with probability ≥ {NUM} "
          rf"\(all \d+ at once with probability ≥ {NUM} only\)"
          rf"|All \d+ intervals cover their coefficients of the fit on these rows at once with probability ≥ {NUM} "
          rf"\(each at {NUM}\))")
UNIT_ODDS = rf"Other things equal, one more unit of {NAME} \(as encoded\) multiplies the odds of {NAME} by {RATIO}"
GROUP_ODDS = rf"Other things equal, the odds of {NAME} for {NAME} are {RATIO}"


def _sign(where: str, noise: str) -> str:
    """core.report._sign: whether a range excludes 0, `where`, allowing for `noise`."""
    return (rf"(?:The whole range is above 0: allowing for {noise}, the association is positive {where}"
            rf"|The whole range is below 0: allowing for {noise}, the association is negative {where}"
            rf"|The range includes 0: {where}, allowing for {noise}, the sign of the association is not settled)\.")


def _odds(span: str) -> str:
    """core.report._odds: a coefficient as an odds ratio, per unit as encoded or for one group against another."""
    return rf"(?:{UNIT_ODDS} \({span}\)|{GROUP_ODDS} \({span}\) times those for {NAME})\."


def _holds(level: str) -> str:
    """core.report.plain_table_summary: what a table's ranges cover at `level`, one row, all together or each."""
    return (rf"(?:the range holds with probability {level}|the \d+ ranges hold together with probability {level} "
            rf"\(each at {NUM}\)|each range holds with probability {level} on its own \(not all \d+ together\))")


CLAIMS: tuple[Claim, ...] = (
    # core.report.plain_summary and first_sentence: one coefficient
    Claim(rf"Nothing was released for {NAME}: {REASON}\.", METHOD, TEST, "definition"),
    Claim(rf"{ESTIMATE}, with an? {PCT} range from {NUM} to {NUM} \(± {NUM}\), for the people in these data\.",
          METHOD, RELEASE, "theorem"),
    Claim(rf"{ESTIMATE}, with an? {PCT} range from {NUM} to {NUM} \(± {NUM}\), for the people in these data; "
          rf"odds ratio {RATIO} \({SPAN}\)\.", METHOD, RELEASE, "theorem"),
    Claim(rf"{ESTIMATE}, with an? {PCT} range from {NUM} to {NUM} \(± {NUM}\), for the people in these data; "
          rf"odds ratio {RATIO} \({WIDE}\)\.", EXPERIMENTS, FORECAST, "definition"),
    Claim(rf"{ESTIMATE}, with an approximate {PCT} range from {NUM} to {NUM} \(± {NUM}\), for the people in these "
          rf"data \({MEASURED}\)(?:; odds ratio {RATIO} \((?:{SPAN}|{WIDE})\))?\.", PRIVACY, CURVATURE, "definition"),
    Claim(rf"{ESTIMATE}\.", PRIVACY, FALLBACK, "definition"),
    Claim(rf"Its {PCT} range, from {NUM} to {NUM}, is for the coefficient of a ridge-regularised fit on these data, "
          r"which the ridge pulls toward 0: too little curvature could be certified privately at this budget for a "
          r"range of the coefficient fitted on these data \(more rows or a larger ε would allow one\)\.",
          PRIVACY, FALLBACK, "theorem"),
    Claim(rf"Its approximate {PCT} range, from {NUM} to {NUM}, is for the coefficient of a ridge-regularised fit on "
          r"these data, which the ridge pulls toward 0: too little curvature could be certified privately at this "
          r"budget for a range of the coefficient fitted on these data \(more rows or a larger ε would allow one\)\.",
          PRIVACY, FALLBACK, "definition"),
    Claim(_sign("in these data", "the privacy noise"), METHOD, RELEASE, "theorem"),
    Claim(_sign("for the ridge-regularised fit on these data", "the privacy noise"), PRIVACY, FALLBACK, "theorem"),
    Claim(_odds(f"range {SPAN}"), METHOD, RELEASE, "theorem"),
    Claim(_odds(WIDE), EXPERIMENTS, FORECAST, "definition"),
    Claim(rf"For the population these people were sampled from, the {PCT} range is {NUM} to {NUM} \(approximate: it "
          rf"holds only if the rows are a random sample and the logistic model is right; {OFF_MODEL}\)\.",
          EXPERIMENTS, POPULATION, "measurement"),
    Claim(_sign("in the population", "the sampling and the privacy noise"), EXPERIMENTS, POPULATION, "measurement"),
    Claim(r"Privacy: whether any one \w+'s data are in the data set or not changes the chance of anything in this "
          rf"report by at most a factor of {FACTOR} \(ε = {NUM}\), except with probability {NUM} \(δ\)\.",
          PRIVACY, COMPOSITION, "theorem"),
    # core.report.interval_scope
    Claim(rf"This private interval covers {FITTED}, {SCOPE}", METHOD, RELEASE, "theorem"),
    Claim(rf"This private interval covers {RIDGE}, {SCOPE}", PRIVACY, FALLBACK, "theorem"),
    Claim(rf"This private interval covers (?:{FITTED}|{RIDGE}), approximately \(to first order in the noise, with "
          rf"coverage measured rather than proven\), {SCOPE}", PRIVACY, CURVATURE, "definition"),
    # core.report.plain_table_summary and first_sentence: a regression table
    Claim(rf"Nothing was released: {REASON}\.", PRIVACY, TABLE, "definition"),
    Claim(rf"{ESTIMATES}; {_holds(PCT)}\.", PRIVACY, TABLE, "theorem"),
    Claim(rf"{ESTIMATES}; {_holds('approximate ' + PCT)}: {MEASURED}\.", PRIVACY, CURVATURE, "definition"),
    Claim(rf"{NAME}: {NUM}, range {NUM} to {NUM} \({SHORT}\)\.", PRIVACY, TABLE, "theorem"),
    Claim(rf"{NAME}: {NUM}; its range, {NUM} to {NUM}, is for a ridge-regularised fit pulled toward 0 \({SHORT}\), not "
          r"for the coefficient fitted on these data\.", PRIVACY, FALLBACK, "theorem"),
    Claim(r"Where too little curvature could be certified privately at this budget, a range is for the "
          r"ridge-regularised fit only; more rows or a larger ε would allow a range of the fitted coefficient\.",
          PRIVACY, FALLBACK, "theorem"),
    Claim(rf"A regression table: {TABLE_ROW}(?:; {TABLE_ROW})*\.", PRIVACY, TABLE, "theorem"),
    Claim(rf"A regression table: nothing was released \({REASON}\)\.", PRIVACY, TABLE, "definition"),
    # core.report.table_note
    Claim(r"Nothing was released, so there is no interval\.", PRIVACY, TABLE, "definition"),
    Claim(rf"{COVERS} when the lower certificate holds \(probability ≥ 1 − {NUM}\)\.", PRIVACY, TABLE, "theorem"),
    Claim(rf"{COVERS} \({PROVEN}\); each row's width comes from a private bound on the curvature along that "
          r"coefficient, its noise accounted for\.", PRIVACY, CURVATURE, "theorem"),
    Claim(rf"For {NAME}, where too little curvature was certified, that coefficient is of the fallback's "
          r"ridge-regularised fit, pulled toward 0 by the ridge, not of the fit on these rows\.",
          PRIVACY, FALLBACK, "theorem"),
    # the release notes: core.mechanisms.release, fallback.interval_note, inference.POPULATION_NOTE
    Claim(r"Algorithm 5: the interval covers uᵀθ\(Pₙ\), the coefficient fitted on these rows, with probability at "
          r"least \(1 − a\)\(1 − δₐ\), 1 − a its stated level\.", METHOD, RELEASE, "theorem"),
    Claim(r"No value was released, so there is no interval\.", METHOD, RELEASE, "definition"),
    Claim(rf"Objective perturbation \(fallback\): the interval covers uᵀθ\(Pₙ\), the coefficient fitted on these "
          rf"rows, with probability ≥ {NUM} \({PROVEN}\); its width comes from a private bound on the curvature at the "
          r"released point, its noise accounted for, and it accounts for the fallback's ridge\.",
          PRIVACY, CURVATURE, "theorem"),
    Claim(rf"Objective perturbation \(fallback\): the interval covers uᵀθ_λ\(Pₙ\), the coefficient of the fit "
          rf"regularised by λ = {NUM} and pulled toward 0 by it \(not the unregularised uᵀθ\(Pₙ\)\), with probability "
          rf"≥ {NUM}, proven for every data set; no interval for the fitted coefficient could be proven at this n and "
          r"ε\.", PRIVACY, FALLBACK, "theorem"),
    Claim(r"approximate: it assumes the rows are a simple random sample of the population and that the logistic model "
          rf"holds \(so that the sampling variance is uᵀH⁻¹u/n\), and holds only then: {OFF_MODEL}; large-sample "
          r"normal; coverage measured, not proven", EXPERIMENTS, POPULATION, "measurement"),
)


def source_of(sentence: str) -> Claim | None:
    """The first claim whose pattern matches the whole sentence (surrounding whitespace stripped); None if none does."""
    s = sentence.strip()
    return next((c for c in CLAIMS if re.fullmatch(c.pattern, s)), None)


_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")  # whitespace after a full stop, or a line break
ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.")  # a full stop that ends no sentence


def sentences(text: str) -> list[str]:
    """Rendered text split into sentences: at whitespace after ".", "!" or "?" (so a decimal such as 0.95, a file name
    or "uᵀθ(Pₙ)" inside a sentence never splits it) and at line breaks, except after an abbreviation such as
    "e.g."."""
    out: list[str] = []
    for piece in filter(None, (p.strip() for p in _BREAK.split(text))):
        if out and out[-1].endswith(ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
