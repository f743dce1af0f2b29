"""The JSON document of `python -m core release`: every stage, with the non-private parts listed.

JSON has no infinity: non-finite numbers are written as null.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np

from core.data.spec import DataSpec, FolderSpec
from core.estimator.model import ModelSpec
from core.mechanisms.certificates import RecursiveBound
from core.mechanisms.curvature import PROVEN_NOTE
from core.mechanisms.forecast import LOGISTIC_PLAUSIBLE
from core.mechanisms.inference import OFF_MODEL
from core.mechanisms.pipeline import PrivateRun, Problem
from core.mechanisms.release import FITTED, RIDGE, TARGETS, Release, interval_target
from core.mechanisms.stability import StabilityTest
from core.mechanisms.table import EACH, TOGETHER, TableRelease
from core.methods.compare import Comparison, MethodTrials
from core.privacy.accounting import Budget, StageBudget
from core.privacy.gaussian import exp_magnitude
from core.privacy.marks import PublicView, not_private, public
from core.privacy.population import ACS, SYNTHETIC_CENSUS, Population
from core.privacy.unit import PrivacyUnit

# Dotted paths of values computed from the data without privacy; everything else is private
# or public (the budget, the settings).
NOT_PRIVATE_PATHS = (
    "fit",
    "clipped_rows",
    "clipped_responses",
    *sorted(f"{stage}.{name}" for stage in ("lambda_min", "lambda_max") for name in not_private(RecursiveBound)),
    *sorted(f"release.{name}" for name in not_private(Release) | {"noise_sd"}),
)


# Where the marked fields of the comparison types appear in the compare document, with every entry
# computed from them; a marked field missing here is listed under its own name.
COMPARISON_ENTRIES = {
    "u_theta": ("targets.u_theta_fit", "methods.*.errors"),  # the errors are measured against it
    "full_vector": ("full_vector.*.l2_errors_vs_fit",),
}
METHOD_KEYS = {"seconds": "median_seconds"}  # MethodTrials field -> its key in a method's entry


def compare_not_private(comparison: Comparison) -> list[str]:
    """Dotted paths of the compare document's entries computed from the data without privacy.

    Derived from the NOT_PRIVATE marks on Comparison and MethodTrials (core.methods.compare), and from each
    method's own `private` flag: a method whose values are not private (the oracle) is listed whole.
    """
    paths = [p for name in sorted(not_private(comparison)) for p in COMPARISON_ENTRIES.get(name, (name,))]
    trials = [*comparison.methods.values(), *comparison.full_vector.values()]
    marked = set(not_private(MethodTrials)).union(*(not_private(m) for m in trials))
    paths += [f"{group}.*.{METHOD_KEYS.get(name, name)}" for name in sorted(marked)
              for group in ("methods", "full_vector")]
    paths += [f"methods.{name}" for name, m in comparison.methods.items() if not m.private]
    return list(dict.fromkeys(paths))


def stage_dict(stage: StageBudget) -> dict:
    return dict(epsilon=stage.epsilon, delta=stage.delta)


def stages_dict(budget: Budget) -> dict:
    """The budget's three stages in order (Budget.stages), each as {epsilon, delta}."""
    return {name: stage_dict(stage) for name, stage in budget.stages()}


SEEDED_WARNING = (
    "NOT a private release: its noise came from a fixed seed for teaching, and anyone who knows the seed can "
    "remove it. Draw again without a seed (or in Publish mode) before sharing any value."
)


# What the first screen says of a fallback's interval in a document published while that interval was first order in
# the privacy noise (one without interval_proven): its level is not shown as certain. Every interval released now is
# proven (docs/privacy.md, "Curvature at the released point").
MEASURED_NOT_PROVEN = ("its coverage is measured, not proven, and fell short of the stated level on samples of a few "
                       "hundred rows: 87 to 89 % in docs/curvature_proof.md")


def proven(release: dict) -> bool:
    """Whether a document's interval is proven: Algorithm 5's always, the fallback's when the document says so (one
    published before the fallback's intervals were proven does not)."""
    return release["status"] != "fallback" or bool(release.get("interval_proven") or release.get("proven"))


def level_words(release: dict) -> str:
    """An interval's level as the first screen states it: "95%" where it is proven, "approximate 95%" in a document
    whose fallback interval was first order in the noise (`proven`)."""
    level = f"{release['interval_level']:.0%}"
    return level if proven(release) else f"approximate {level}"


def _a(words: str) -> str:
    return "an" if words[:1] in "aeiou8" else "a"


def target_of(release: dict) -> str | None:
    """What a document's interval covers (core.mechanisms.release.FITTED or RIDGE): its interval_target, or, for a
    document kept before it had one, what its status and its certified curvature say."""
    if "interval_target" in release:
        return release["interval_target"]
    return interval_target(release["status"], (release.get("fallback_curvature") or {}).get("bound") is not None)


def interval_scope(release: dict) -> str:
    """One sentence: what a released interval covers (Algorithm 5's, or the fallback's, with or without a certified
    curvature), against a population confidence interval, which it is not. Each covers a coefficient of the fit on
    these n rows, under the noise."""
    target = TARGETS[target_of(release)]
    if not proven(release):  # a document published while the fallback's interval was first order
        target += ", approximately (to first order in the noise, with coverage measured rather than proven)"
    return (f"This private interval covers {target}, and accounts for the privacy noise only; it is not a "
            "confidence interval for a population coefficient, which would also have to account for the sampling "
            "variability of the n rows.")


# The Report's HTML on paper: no interactive element, no page break inside a card or a table row, black on white.
PRINT_STYLE = """
@media print {
  @page { size: A4; margin: 15mm 14mm; }
  body { font-size: 10.5pt; color: #000; background: #fff; }
  main { max-width: none; margin: 0; padding: 0; }
  h2 { color: #000; break-after: avoid; page-break-after: avoid; }
  .card, .result, .guarantee, .unit, tr { break-inside: avoid; page-break-inside: avoid; }
  .result { border-color: #000; }
  .guarantee { background: #fff; border: 1px solid #555; }
  .unit { border-left-color: #000; }
  .sub, .note { color: #333; }
  th, td { border-bottom-color: #999; }
  a { color: #000; text-decoration: none; }
  button, input, select, textarea, details, summary, nav, script, .no-print { display: none !important; }
}
"""


def clean(value: Any) -> Any:
    """numpy and non-finite values into plain JSON values."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def bound_dict(b: RecursiveBound | None) -> dict | None:
    if b is None:
        return None
    return dict(
        N=b.N, N_hat=b.N_hat, k=b.k, m=b.m, lambda_hat=b.lambda_hat, noise=b.noise,
        statistic=b.statistic, epsilon=b.epsilon, delta=b.delta, covers=b.covers,
    )


def privacy_unit_dict(budget: Budget, privacy_unit: PrivacyUnit | None = None) -> dict:
    """Whom the total budget protects, and the guarantee per person by group privacy for k rows.

    Public: k depends only on the sample seed and the sizes N and n, not on the data values.
    """
    unit = PrivacyUnit("row", 1) if privacy_unit is None else privacy_unit
    eps_k, delta_k = unit.per_person(budget.epsilon_total, budget.delta_total)
    return dict(unit=unit.unit, max_rows_per_person=unit.max_rows_per_person,
                epsilon_per_person=eps_k, delta_per_person=delta_k)


def test_dict(t: StabilityTest) -> dict:
    """The test (14) with every constant of (13), as documents print it."""
    return dict(t=t.t, beta=t.beta, gamma=t.gamma, gamma_prime=t.gamma_prime, s1=t.s1, s2=t.s2, kappa=t.kappa,
                value=t.value, threshold=t.threshold, passed=t.passed, reason=t.reason, lam0=t.lam0, lam1=t.lam1,
                Rl=t.Rl, A=t.A, B=t.B, fit_slack=t.fit_slack, fit_ratio=t.fit_ratio)


def run_dict(run: PrivateRun) -> dict:
    t, r = run.test, run.release
    return dict(
        lambda_min=bound_dict(run.lambda_min),
        lambda_max=bound_dict(run.lambda_max),
        test=test_dict(t),
        release=dict(
            status=r.status, reason=r.reason, value=r.value, omega=r.omega, multiplier=r.multiplier, Delta=r.Delta,
            sigma=r.sigma, interval=r.interval, interval_level=r.interval_level, w_bar=r.w_bar,
            calibration=r.calibration, u_theta=r.u_theta, noise_sd=r.noise_sd,
            oracle_interval=r.oracle_interval, z=r.z,
            branch=r.branch, interval_target=r.interval_target, interval_note=r.interval_note,
            interval_proven=r.interval_proven,
            fallback_epsilon=r.fallback_epsilon,
            fallback_delta=r.fallback_delta, fallback_shares=r.fallback_shares,
            fallback_probe=None if r.fallback_probe is None else public(r.fallback_probe).values(),
            fallback_lambda_reg=r.fallback_lambda_reg,
            fallback_noise_scale=r.fallback_noise_scale,
            fallback_curvature=None if r.fallback_curvature is None else public(r.fallback_curvature).values(),
            fallback_interval=None if r.fallback_interval is None else dataclasses.asdict(r.fallback_interval),
            population=None if r.population is None else dataclasses.asdict(r.population),
        ),
    )


def _source(problem: Problem, source: str | None) -> str:
    if source is not None:
        return source
    return "" if problem.data_spec is None else problem.data_spec.describe()


def release_document(
    problem: Problem, coordinate: int | None, runs: list[PrivateRun], source: str | None = None,
    *, privacy_unit: PrivacyUnit | None = None, noise_seed: int | None = None,
) -> dict:
    """The document for one prepared problem and K >= 1 private runs (the first one at top level).

    source (None: the problem's data spec, described) says where the data came from, in public words.
    The model (loss, domain, radius, lambda_reg) is the problem's resolved spec: the radius the fit
    used on the ball, None on the cube. privacy_unit (None: one row) gives the `privacy_unit` entry,
    the total budget per person. noise_seed is recorded in `noise`: a seeded run replays, and is
    therefore not private.
    """
    g, f, b, m = problem.geometry, problem.fit, runs[0].budget, problem.model
    doc = dict(
        source=_source(problem, source),
        n=f.n,
        d=f.d,
        loss=m.loss,
        domain=m.domain,
        radius=m.radius,
        lambda_reg=m.lam_reg,
        feature_names=list(problem.feature_names),
        coordinate=dict(index=coordinate, name=None if coordinate is None else problem.feature_names[coordinate]),
        u=runs[0].u,
        clipped_rows=problem.clipped_rows,
        response_bound=problem.response_bound,
        clipped_responses=problem.clipped_responses,
        assumptions=assumptions(f.n, m, problem.response_bound,
                                None if problem.data_spec is None or isinstance(problem.data_spec, FolderSpec)
                                else problem.data_spec.population()),
        budget=dict(
            epsilon_total=b.epsilon_total,
            delta_total=b.delta_total,
            split=dict(lambda_min=b.split[0], lambda_max=b.split[1], release=b.split[2]),
            stages=stages_dict(b),
            composition=b.accounting,
            epsilon_basic=b.epsilon_basic,
            delta_basic=b.delta_basic,
        ),
        privacy_unit=privacy_unit_dict(b, privacy_unit),
        noise=dict(seed=noise_seed, source="os_entropy" if noise_seed is None else "seed",
                   private=noise_seed is None, warning=None if noise_seed is None else SEEDED_WARNING),
        constants=dict(r=g.r, G0=g.G0, G1=g.G1, G2=g.G2, d_p=g.d_p, alpha=g.alpha, rho=g.rho),
        fit=dict(
            theta=f.theta, lambda_min=f.lambda_min, lambda_max=f.lambda_max, kappa=f.kappa,
            grad_norm=f.grad_norm, distance=f.distance, iterations=f.iterations,
            status=f.status, diagnosis=f.diagnosis,
        ),
        **run_dict(runs[0]),
        not_private=list(NOT_PRIVATE_PATHS),
    )
    if len(runs) > 1:
        doc["trials"] = [run_dict(r) for r in runs]
    return clean(doc)


def _summary(errors: list[float | None]) -> dict:
    done = np.array([e for e in errors if e is not None], dtype=float)
    if done.size == 0:
        return dict(rmse=None, median_abs=None, released=0)
    return dict(rmse=float(np.sqrt(np.mean(done**2))), median_abs=float(np.median(np.abs(done))), released=done.size)


def compare_document(problem: Problem, coordinate: int, comparison: Comparison, source: str | None = None) -> dict:
    """The document of `python -m core compare`: every method's draws, scales and errors.

    source (None: the problem's data spec, described) says where the data came from; not_private
    lists the entries computed from the data without privacy (`compare_not_private`).
    """
    c, b = comparison, comparison.budget

    def method(m: MethodTrials) -> dict:
        vs_fit = m.errors(c.u_theta)
        out = dict(
            values=list(m.values), noise_scale=m.noise_scale, private=m.private, epsilon=m.epsilon, delta=m.delta,
            lambda_reg=m.lambda_reg, median_seconds=float(np.median(m.seconds)),
            errors=dict(vs_fit=vs_fit, vs_fit_summary=_summary(vs_fit)),
        )
        if c.u_theta_star is not None:
            vs_star = m.errors(c.u_theta_star)
            out["errors"].update(vs_truth=vs_star, vs_truth_summary=_summary(vs_star))
        return out

    def vector(m: MethodTrials) -> dict:
        return dict(l2_errors_vs_fit=list(m.values), noise_scale=m.noise_scale, private=m.private,
                    epsilon=m.epsilon, delta=m.delta, median_seconds=float(np.median(m.seconds)),
                    released=sum(v is not None for v in m.values))

    doc = dict(
        source=_source(problem, source), n=problem.n, d=problem.d, loss=problem.model.loss,
        domain=problem.model.domain,
        coordinate=dict(index=coordinate, name=problem.feature_names[coordinate]),
        epsilon=b.epsilon_total, delta=b.delta_total, trials=len(next(iter(c.methods.values())).values)
        if c.methods else None,
        targets=dict(u_theta_fit=c.u_theta, u_theta_star=c.u_theta_star),
        methods={name: method(m) for name, m in c.methods.items()},
        full_vector={name: vector(m) for name, m in c.full_vector.items()},
        accounting=dict(
            method=b.accounting, epsilon_basic=b.epsilon_basic, delta_basic=b.delta_basic, epsilon_pld=b.epsilon_pld,
            stages=stages_dict(b),
        ),
        not_private=compare_not_private(c),
    )
    return clean(doc)



def assumptions(n: int, model: ModelSpec, response_bound: float, people: Population | None = None) -> list[str]:
    """What the guarantee rests on beyond (epsilon, delta), in words (docs/privacy.md): public facts it takes as
    given and the neighbouring relation it is stated for."""
    if model.domain == "cube":
        domain = "the cube [−1, 1]ᵈ"
    else:
        domain = f"the ball ‖x‖₂ ≤ {model.radius:g}"
    out = [
        f"The number of rows n = {n:,} is public: the guarantee is for data sets of the same size that differ in "
        "one row (replace-one neighbours).",
        f"Every row's features lie in the declared domain, {domain}; rows outside it, if any, were projected onto it "
        "first.",
    ]
    if math.isfinite(response_bound):
        out.append(f"Every response lies within the public bound |y| ≤ {response_bound:.3g}; responses beyond it were "
                   "clipped to it first. The fit's certificate rests on this bound.")
    kinds = {ACS: "census population", SYNTHETIC_CENSUS: "SYNTHETIC population"}
    if people is not None and people.kind in kinds:
        out.append(f"The {kinds[people.kind]} ({people.label}) and its size are treated as public; under add/remove "
                   "neighbours its size would not be.")
    out.append("The noise comes from the operating system's entropy; a run with a fixed seed is not private.")
    return out


def private_report(
    run: PrivateRun,
    coordinate: str,
    budget: Budget,
    source: str,
    n: int,
    d: int,
    *,
    feature_names: tuple[str, ...] = (),
    loss: str | None = None,
    domain: str | None = None,
    radius: float | None = None,
    lambda_reg: float | None = None,
    noise_seed: int | None = None,
    privacy_unit: PrivacyUnit | None = None,
    model: ModelSpec | None = None,
    assumed: list[str] | None = None,
) -> dict:
    """A stakeholder's report of one release: private values and public settings only.

    model, the resolved spec the release was made with (`problem.model`), gives loss, domain,
    radius and lambda_reg, and then the loose keywords of the same names must not be given.

    privacy_unit (None: one row) gives the `privacy_unit` entry: the total budget per person, by
    group privacy when one census person fills several rows of a sample drawn with replacement.

    A run whose noise came from a fixed seed (teaching) is not private, whatever its budget: anyone
    who knows the seed can subtract the noise. Its guarantee is marked as not holding.

    Nothing computed from the data without privacy enters: the fit, u^T theta, Delta, omega, the
    oracle interval, the normal draw and the certificates' exact counts and Laplace draws are left
    out, whatever mode produced the run. n and d are treated as public.
    """

    if model is not None:
        if any(v is not None for v in (loss, domain, radius, lambda_reg)):
            raise TypeError("give the model either as model= or as loss, domain, radius, lambda_reg, not both")
        loss, domain, radius, lambda_reg = model.loss, model.domain, model.radius, model.lam_reg
    view = public(run)  # the report reads the run's public view only (core.privacy.marks.PublicView)
    r, split = view.release, budget.split
    doc = dict(
        data=dict(source=source, n=n, d=d, feature_names=list(feature_names), loss=loss, domain=domain,
                  radius=radius, lambda_reg=lambda_reg),
        coefficient=dict(name=coordinate, u=view.u),
        # the fields include the fallback's lam, s, curvature and note, and the branch
        release={k: v.values() if isinstance(v, PublicView) else v for k, v in r.values().items()},
        # The interval holds when the lower certificate does, so its level is discounted by delta_a.
        interval_coverage=r.interval_level * (1.0 - budget.lambda_min.delta),
        lambda_min=view.lambda_min.values(),
        lambda_max=None if view.lambda_max is None else view.lambda_max.values(),
        test=view.test.values(),
        guarantee=dict(
            epsilon=budget.epsilon_total, delta=budget.delta_total, accounting=budget.accounting,
            holds=noise_seed is None,
            warning=None if noise_seed is None else SEEDED_WARNING,
        ),
        privacy_unit=privacy_unit_dict(budget, privacy_unit),
        assumptions=assumed,
        method=dict(
            algorithm="Algorithm 5 of Asi, Duchi & Talwar (2025), On privately estimating a single parameter",
            calibration=r.calibration,
            accounting=budget.accounting,
            split=dict(lambda_min=split[0], lambda_max=split[1], release=split[2]),
            stages=stages_dict(budget),
            epsilon_basic=budget.epsilon_basic,
            delta_basic=budget.delta_basic,
        ),
    )
    return clean(doc)


def document_text(document: dict) -> str:
    """A private document as the ledger keeps it and the command line prints it, byte for byte."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False)


def published_report(run: PrivateRun, coordinate: str, budget: Budget, data: DataSpec, model: ModelSpec, n: int,
                     d: int, feature_names: tuple[str, ...], unit: PrivacyUnit | None) -> dict:
    """The private report of a charged release, as the Report shows it and the ledger keeps it (without the ledger's
    own account, which changes with every later release)."""
    rep = private_report(run, coordinate, budget, data.describe(), n, d, feature_names=feature_names, model=model,
                         privacy_unit=unit, assumed=assumptions(n, model, model.bound_for(n, d), data.population()))
    rep["data"] |= dict(outcome=getattr(data, "outcome", None), groups=getattr(data, "groups", {}))
    return rep


def table_document(t: TableRelease, source: str, n: int, d: int, model: ModelSpec, unit: PrivacyUnit | None,
                   noise_seed: int | None = None) -> dict:
    """The private report of a regression table (core.mechanisms.table): its rows (name, value, interval, half-width),
    the branch and what its intervals cover, the certificates' and the test's private view, the fallback's curvature
    bounds, the budget's stages and the guarantee. The unpublished coordinates of the released vector and the fit
    stay out."""
    b = t.budget
    rows = [] if t.values is None else [
        dict(name=name, value=v, low=lo, high=hi, half_width=h, target=target)
        for name, v, (lo, hi), h, target in zip(t.names, t.values, t.intervals, t.half_widths, t.targets, strict=True)]
    fb = t.fallback
    return clean(dict(
        data=dict(source=source, n=n, d=d, loss=model.loss, domain=model.domain, radius=model.radius,
                  lambda_reg=model.lam_reg),
        table=dict(status=t.status, reason=t.reason, level=t.level, coverage=t.coverage, row_level=t.row_level,
                   rows=rows, interval_note=table_note(t), proven=t.values is not None),
        lambda_min=public(t.lambda_min).values(),  # the certificates' private outputs only
        lambda_max=None if t.lambda_max is None else public(t.lambda_max).values(),
        test=test_dict(t.test),
        fallback=None if fb is None else dict(
            epsilon=fb.split.epsilon, delta=fb.split.delta, shares=fb.split.shares, lambda_reg=fb.lambda_reg,
            noise_scale=fb.noise_scale, probe=None if t.probe is None else public(t.probe).values(),
            curvature=[dict(name=name, **public(c).values()) for name, c in zip(t.names, fb.curvatures, strict=True)]),
        guarantee=dict(epsilon=b.epsilon_total, delta=b.delta_total, holds=noise_seed is None,
                       warning=None if noise_seed is None else SEEDED_WARNING),
        privacy_unit=privacy_unit_dict(b, unit),
        method=dict(algorithm=TABLE_METHODS[t.status], calibration=t.calibration, accounting=b.accounting,
                    stages=stages_dict(b)),
    ))


TABLE_METHODS = {
    "released": "One release of the whole vector by Algorithm 3's Gaussian step at the release stage's budget, after "
                "the certificates and the test (14) of Asi, Duchi & Talwar (2025); the chosen coordinates published",
    "fallback": "Objective perturbation (15) of the whole vector on the budget the test (14) left, with a private "
                "bound on the curvature along each chosen coordinate; the chosen coordinates published",
    "bottom": "Nothing released: the test (14) failed (or the release could not be certified)",
}


def table_note(t: TableRelease) -> str:
    """What a table's intervals cover, in words."""
    if t.status == "bottom":
        return "Nothing was released, so there is no interval."
    ridge = [name for name, target in zip(t.names, t.targets, strict=True) if target == RIDGE]
    if t.k == 1:
        covers = f"The interval covers its coefficient of the fit on these rows with probability ≥ {t.level:g}"
    elif t.coverage == EACH:
        covers = (f"Each of the {t.k} intervals covers its coefficient of the fit on these rows with probability "
                  f"≥ {t.level:g} (all {t.k} at once with probability ≥ {max(0.0, 1 - t.k * (1 - t.level)):.4g} only)")
    else:
        covers = (f"All {t.k} intervals cover their coefficients of the fit on these rows at once with probability "
                  f"≥ {t.level:g} (each at {t.row_level:.4g})")
    if t.status == "released":
        return f"{covers} when the lower certificate holds (probability ≥ 1 − {t.lambda_min.delta:.2g})."
    pulled = "" if not ridge else (
        f" For {', '.join(ridge)}, where too little curvature was certified, that coefficient is of the fallback's "
        "ridge-regularised fit, pulled toward 0 by the ridge, not of the fit on these rows.")
    return (f"{covers} ({PROVEN_NOTE}); each row's width comes from a private bound on the curvature along that "
            f"coefficient, its noise accounted for.{pulled}")


def _sign(lo: float, hi: float, where: str, noise: str = "the privacy noise") -> str:
    if lo > 0:
        return f"The whole range is above 0: allowing for {noise}, the association is positive {where}."
    if hi < 0:
        return f"The whole range is below 0: allowing for {noise}, the association is negative {where}."
    return f"The range includes 0: {where}, allowing for {noise}, the sign of the association is not settled."


def _odds(rep: dict, value: float, lo: float, hi: float, name: str | None = None) -> str:
    """A logistic coefficient as an odds ratio, in words: for a census indicator, one group's odds against another's
    (only where the range is the fitted coefficient's: the ridge's would be read as the data's odds)."""
    d, name = rep["data"], name or rep["coefficient"]["name"]
    outcome = d.get("outcome") or "the outcome y = 1"
    ratio = f"{_times(value)} ({_ratio_range(lo, hi)})"
    if name in (d.get("groups") or {}):
        group, others = d["groups"][name]
        return f"Other things equal, the odds of {outcome} for {group} are {ratio} times those for {others}."
    return f"Other things equal, one more unit of {name} (as encoded) multiplies the odds of {outcome} by {ratio}."


def plain_summary(rep: dict, epsilon: float, delta: float, unit: str = "person") -> list[str]:
    """The Report's first screen in words, for a reader who wants no formula: the value and its range, whether the
    range excludes 0, an odds ratio for a logistic coefficient, the population's range when there is one, and what
    the privacy budget (epsilon, delta) of everything the document prints means. Private values only."""
    r, name = rep["release"], rep["coefficient"]["name"]
    if r["value"] is None:
        return [f"Nothing was released for {name}: {r['reason']}."]
    lo, hi = r["interval"]
    level = level_words(r)
    if target_of(r) == RIDGE:  # the range is for the ridge's coefficient: said so, and no odds-ratio range
        out = [f"The private estimate of the coefficient of {name} is {r['value']:.3g}. Its {level} range, from "
               f"{lo:.3g} to {hi:.3g}, is for the coefficient of a ridge-regularised fit on these data, which the "
               "ridge pulls toward 0: too little curvature could be certified privately at this budget for a range "
               "of the coefficient fitted on these data (more rows or a larger ε would allow one).",
               _sign(lo, hi, "for the ridge-regularised fit on these data")]
    else:
        caveat = "" if proven(r) else f" ({MEASURED_NOT_PROVEN})"
        out = [f"The private estimate of the coefficient of {name} is {r['value']:.3g}, with {_a(level)} {level} range "
               f"from {lo:.3g} to {hi:.3g} (± {(hi - lo) / 2:.2g}), for the people in these data{caveat}.",
               _sign(lo, hi, "in these data")]
        if rep["data"]["loss"] == "logistic":
            out.append(_odds(rep, r["value"], lo, hi))
    if r.get("population"):
        plo, phi = r["population"]["interval"]
        out.append(f"For the population these people were sampled from, the {r['interval_level']:.0%} range is "
                   f"{plo:.3g} to {phi:.3g} (approximate: it holds only if the rows are a random sample and the "
                   f"logistic model is right; {OFF_MODEL}). "
                   + _sign(plo, phi, "in the population", "the sampling and the privacy noise"))
    out.append(_privacy_words(epsilon, delta, unit))
    return out


def _privacy_words(epsilon: float, delta: float, unit: str) -> str:
    """What the budget of everything a document prints means, in words."""
    return (f"Privacy: whether any one {unit}'s data are in the data set or not changes the chance of anything in this "
            f"report by at most a factor of {exp_magnitude(epsilon)} (ε = {epsilon:g}), except with probability "
            f"{delta:.2g} (δ).")


def first_sentence(doc: dict) -> str:
    """A published document in one line, for an index of publications: the value and its range (and, for the logistic
    loss, the odds ratio), or a table's rows in brief. Private values only."""
    logistic = doc["data"].get("loss") == "logistic"
    if "table" not in doc:
        r = doc["release"]
        first = plain_summary(doc, 1.0, 0.0)[0]
        if not logistic or r["value"] is None or target_of(r) == RIDGE:
            return first
        lo, hi = r["interval"]
        return f"{first[:-1]}; odds ratio {_ratio(r['value'], lo, hi)}."
    rows = doc["table"]["rows"]
    if not rows:
        return f"A regression table: nothing was released ({doc['table']['reason']})."
    ridge = [row_target(doc, i) == RIDGE for i in range(len(rows))]
    return "A regression table: " + "; ".join(
        f"{r['name']} {r['value']:.3g} ({'ridge-regularised fit, ' if pulled else ''}{r['low']:.3g} to {r['high']:.3g}"
        + (f", odds ratio {_ratio(r['value'], r['low'], r['high'])})" if logistic and not pulled else ")")
        for r, pulled in zip(rows, ridge, strict=True)) + "."


def row_target(doc: dict, i: int) -> str:
    """What row i of a table's document covers (FITTED or RIDGE): its target, or, for a document kept before rows had
    one, whether the fallback certified that row's curvature."""
    row = doc["table"]["rows"][i]
    if "target" in row:
        return row["target"]
    curvature = (doc.get("fallback") or {}).get("curvature") or []
    certified = i >= len(curvature) or curvature[i].get("bound") is not None
    return interval_target(doc["table"]["status"], certified) or FITTED


def _ratio(value: float, lo: float, hi: float) -> str:
    return f"{_times(value)} ({_ratio_range(lo, hi).removeprefix('range ')})"


EXTREME = 1_000.0  # an odds ratio past this (or below its inverse) is read in words, not in digits


def _times(log_ratio: float) -> str:
    """An odds ratio exp(log_ratio) for a reader: three digits, or in words past EXTREME either way."""
    x = math.exp(min(log_ratio, 700.0))
    return f"over {EXTREME:,.0f}" if x > EXTREME else f"under 1/{EXTREME:,.0f}" if x < 1 / EXTREME else f"{x:.3g}"


def _ratio_range(lo: float, hi: float) -> str:
    """An odds ratio's range in words: "range a to b", or "uninformative: from … to …" where it runs from below 1/100
    to above 100 (core.mechanisms.forecast's plausible half-range, ln 100), which tells a reader nothing."""
    span = _times(lo) if _times(lo) == _times(hi) else f"{_times(lo)} to {_times(hi)}"
    return f"uninformative: from {span}" if lo < -LOGISTIC_PLAUSIBLE and hi > LOGISTIC_PLAUSIBLE else f"range {span}"


PUBLICATION_PATH = "/report?release="  # a publication's permanent address on the app, after its server's address


def _short_sign(lo: float, hi: float) -> str:
    return "above 0" if lo > 0 else "below 0" if hi < 0 else "includes 0: sign not settled"


def together(table: dict) -> bool:
    """Whether a table document's intervals hold all at once (a document published before the choice existed did)."""
    return table.get("coverage", TOGETHER) == TOGETHER


def plain_table_summary(doc: dict, epsilon: float, delta: float, unit: str = "person") -> list[str]:
    """A regression table's first screen in words: one sentence per coefficient (its value, its range, whether the range
    excludes 0 and, for the logistic loss, the odds ratio), what the ranges cover together, and what the privacy budget
    (epsilon, delta) of everything the document prints means. Private values only."""
    t = doc["table"]
    if t["status"] == "bottom" or not t["rows"]:
        return [f"Nothing was released: {t['reason']}.", _privacy_words(epsilon, delta, unit)]
    k, logistic = len(t["rows"]), doc["data"]["loss"] == "logistic"
    level = level_words(dict(interval_level=t["level"], status=t["status"], proven=t.get("proven")))
    holds = (f"the range holds with probability {level}." if k == 1 else
             f"the {k} ranges hold together with probability {level} (each at {t['row_level']:.3g})."
             if together(t) else
             f"each range holds with probability {level} on its own (not all {k} together).")
    if not proven(dict(status=t["status"], proven=t.get("proven"))):
        holds = f"{holds[:-1]}: {MEASURED_NOT_PROVEN}."
    out = [f"Private estimates of {k} coefficient{'s' if k > 1 else ''} for the people in these data; {holds}"]
    for i, r in enumerate(t["rows"]):
        lo, hi = r["low"], r["high"]
        if row_target(doc, i) == RIDGE:  # the ridge's coefficient: said so, and no odds-ratio range
            out.append(f"{r['name']}: {r['value']:.3g}; its range, {lo:.3g} to {hi:.3g}, is for a "
                       f"ridge-regularised fit pulled toward 0 (the range {_short_sign(lo, hi)}), not for the "
                       "coefficient fitted on these data.")
            continue
        line = f"{r['name']}: {r['value']:.3g}, range {lo:.3g} to {hi:.3g} (the range {_short_sign(lo, hi)})."
        out.append(line + (" " + _odds(doc, r["value"], lo, hi, r["name"]) if logistic else ""))
    if any(row_target(doc, i) == RIDGE for i in range(k)):
        out.append("Where too little curvature could be certified privately at this budget, a range is for the "
                   "ridge-regularised fit only; more rows or a larger ε would allow a range of the fitted "
                   "coefficient.")
    out.append(_privacy_words(epsilon, delta, unit))
    return out

