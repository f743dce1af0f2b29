"""A run's settings as a standalone Python script or a Jupyter notebook that runs them again through `core`.

The run is its plan (`core.plan.ReleasePlan`), checked when it was made: the data spec (`core.data.spec`), the model
spec (`core.estimator.model`), the coefficient (a feature by its name, or a direction u), the total budget (ε, δ) with
its split's weights as given and its accounting (`core.privacy.accounting`, docs/method.md §9), the calibration of
σ(ε_c, δ_c) of (7), the interval level, the fallback setting and the noise seed.
`script` and `notebook` write the same code: load the data from the spec, `prepare_spec` (stage 0,
the fit of (1)), `run_private` with `make_rng(seed)` (stages 1-4: Algorithms 2 and 4, the test (14),
the release of Algorithm 5), then print the released value, its interval and the test's outcome.

Every value is written with repr(), so floats and strings round-trip exactly and no name or path can
end a literal or a comment; names never enter the notebook's markdown. With a seed the code replays
the run exactly on the same kind of processor (on another, the fit's sums, vectorised for it and by
BLAS, may differ in the last bits). Without one the noise comes from the operating system: the code
reruns the settings with fresh noise, and on data about people that is a new release, charged to no
ledger; the header says so. A file's SHA-256 digest is a function of the data (`core.privacy.population`), so it is
written only into a seeded script, which is not private anyway; without a seed the file is read as it is.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import PureWindowsPath

import numpy as np

from core.data.folder import shown_root
from core.data.spec import AcsSpec, CsvSpec, FolderSpec, PumsSpec, SyntheticCensusSpec, SyntheticSpec
from core.errors import InputError, is_real
from core.plan import ReleasePlan

Target = str | tuple[float, ...]  # a feature name, or a direction u in R^d


def exact(plan: ReleasePlan) -> bool:
    """Whether the code replays the run exactly: only a seeded run's noise can be drawn again."""
    return plan.seed is not None


def _target(plan: ReleasePlan) -> Target:
    """The coefficient as the code names it: a coordinate by its feature's name, a direction u as given."""
    return plan.name if isinstance(plan.target, int) else plan.target


def _finite(value: object, what: str) -> float:
    """value as a finite float (repr of inf or nan is not a Python literal), else InputError naming what."""
    if not is_real(value):
        raise InputError(f"{what} must be a finite number, got {value!r}; give a finite one")
    return float(value)


def _lit(value: object) -> str:
    """A Python literal of value: repr() of plain Python values, which quotes and escapes strings and round-trips
    floats; numpy scalars become Python ones first (numpy 2 writes np.int64(5)), and inf or nan is refused."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple | list):
        items = [_lit(v) for v in value]
        if isinstance(value, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if value is None or isinstance(value, bool | str | int):
        return repr(value)
    return repr(_finite(value, "a setting"))


def _args(**fields: object) -> str:
    return ", ".join(f"{k}={_lit(v)}" for k, v in fields.items())


def _call(name: str, **fields: object) -> str:
    return f"{name}({_args(**fields)})"


def file_name(name: str) -> str:
    """The last component of a file's name (either separator), as the user saves the file beside the code."""
    base = PureWindowsPath(name).name
    if base in ("", ".", ".."):
        raise InputError(f"the file name {name!r} has no usable last component; rename the file and load it again "
                         "with {data}", "data")
    return base


# ---------------------------------------------------------------- the code, stage by stage


Cell = tuple[str, str]  # (markdown explaining the stage, its code)


def _header(r: ReleasePlan) -> list[str]:
    """What the code reproduces, in words; the first lines of the script and the notebook's first cell."""
    if exact(r):
        return [
            f"Reproduces a seeded TEACHING run exactly: noise seed {r.seed}, so every run prints the same numbers.",
            "NOT a private release: anyone who knows the seed can remove the noise. Do not publish its values.",
        ]
    lines = [
        "Reruns these settings with FRESH noise from the operating system. It does not reproduce the value seen:",
        "that noise was never recorded and cannot be drawn again, so each run prints a different value.",
    ]
    if isinstance(r.data, SyntheticSpec | SyntheticCensusSpec):
        return [*lines, "The data are synthetic, drawn from the settings below: no person's budget is at stake."]
    return [
        *lines,
        f"Running it on the real data is a NEW release that spends (ε, δ) = ({r.budget.epsilon_total!r}, "
        f"{r.budget.delta_total!r}) on the",
        "people in the data again, OUTSIDE any privacy ledger: no cap checks it and no log records it.",
    ]


def _file_cell(spec: CsvSpec | PumsSpec, r: ReleasePlan, folder: tuple[str, str]) -> Cell:
    base = file_name(spec.name)
    kind = type(spec).__name__
    if isinstance(spec, CsvSpec):
        sample = {} if spec.response == "y" else dict(response=spec.response)
        if spec.formula:  # the model as stated, and the public facts it was encoded with
            sample |= dict(formula=spec.formula)
    else:
        sample = dict(n=spec.n, sample_seed=spec.sample_seed, with_replacement=spec.with_replacement,
                      encoding=spec.encoding)
    rest = "".join(f", {k}={_lit(v)}" for k, v in sample.items())
    if isinstance(spec, CsvSpec) and spec.codebook is not None:
        rest += f", codebook=Codebook.from_csv({_lit(spec.codebook.to_csv())})"
    if exact(r):
        # A seeded run replays only on the same bytes: the digest makes load() refuse any other file.
        check = "# Its SHA-256 digest (computed from the data: NOT private) makes load() refuse any other file.\n"
        build = f"{kind}({_args(digest=spec.digest, name=base)}, path=str(FILE){rest})"
    else:
        check = "# The file is used as it is: make sure it is the one the release was made on.\n"
        build = f"{kind}.from_path(FILE{rest})"
    code = (f"# Put the data file beside this {folder[0]} under this name.\n{check}"
            f"FILE = {folder[1]} / {_lit(base)}\nDATA = {build}\ndata = DATA.load()")
    return "The data: the file, read again from beside the code, and loaded as the app loaded it.", code


def _data_cell(r: ReleasePlan, folder: tuple[str, str]) -> Cell:
    spec = r.data
    if isinstance(spec, SyntheticSpec):
        build = _call("SyntheticSpec", loss=spec.loss, n=spec.n, d=spec.d, theta_norm=spec.theta_norm,
                      noise_scale=spec.noise_scale, sample_seed=spec.sample_seed)
        return ("The data: the paper's simulation (section 4.1), drawn again from its seed.",
                f"DATA = {build}\ndata = DATA.load()")
    if isinstance(spec, AcsSpec):
        build = _call("AcsSpec", states=spec.states, year=spec.year, horizon=spec.horizon, root=spec.root, n=spec.n,
                      sample_seed=spec.sample_seed, download=spec.download, with_replacement=spec.with_replacement,
                      encoding=spec.encoding)
        return ("The data: ACS income from the census person files (section 4.2), sampled again from its seed.",
                "# root is the census folder the settings named (None: the default folder); set it to yours.\n"
                f"DATA = {build}\ndata = DATA.load()")
    if isinstance(spec, SyntheticCensusSpec):
        build = _call("SyntheticCensusSpec", states=spec.states, year=spec.year, horizon=spec.horizon, rows=spec.rows,
                      n=spec.n, sample_seed=spec.sample_seed, with_replacement=spec.with_replacement,
                      encoding=spec.encoding)
        return ("The data: a SYNTHETIC census sample (made-up records in the census layout, no real person), made "
                "again from its seed if it is not on this machine, then sampled again from the sample seed.",
                f"DATA = {build}\ndata = DATA.load()")
    if isinstance(spec, FolderSpec):
        where = shown_root(spec.root) if spec.name is None else spec.name
        build = _call("FolderSpec", root=where, response=spec.response, features=spec.features)
        return ("The data: a folder of Parquet or CSV files, read in blocks as the release read them.",
                "# root names the folder as the release did (a curator's folder by its name): set it to where its "
                f"files are.\nDATA = {build}\ndata = DATA.load()")
    return _file_cell(spec, r, folder)


def _target_line(r: ReleasePlan) -> str:
    target = _target(r)
    if isinstance(target, str):
        return f"COEFFICIENT = {_lit(target)}  # a feature's name: u = e_j"
    return f"COEFFICIENT = np.array({_lit(list(target))})  # the direction u, normalised by run_private"


def cells(r: ReleasePlan, folder: tuple[str, str]) -> list[Cell]:
    """The stages as (markdown, code) pairs; folder is (the file's kind, the expression of its folder)."""
    m, b = r.model, r.budget
    script = folder[0] == "script"
    standard = [*(["import sys"] if script else []),
                *(["from pathlib import Path"] if script or isinstance(r.data, CsvSpec | PumsSpec) else []),
                *(["import numpy as np"] if not isinstance(r.target, int) else [])]
    # Python puts a script's own folder on sys.path, not the folder it is run from: add the latter, the repository.
    path = ["sys.path.insert(0, str(Path.cwd()))  # run from the repository's root: its core package"] if script else []
    imports = "\n\n".join([*standard, *path,
                            "from core.privacy.accounting import make_budget\n"
                            "from core.estimator.model import ModelSpec\n"
                            "from core.mechanisms.pipeline import make_rng, prepare_spec, run_private\n"
                            f"from core.data.spec import {type(r.data).__name__}",
                            *(["from core.data.formula import Codebook"] if getattr(r.data, "codebook", None)
                              else [])])
    seed = "None  # fresh noise from the operating system" if r.seed is None else f"{_lit(r.seed)}  # replays the run"
    return [
        ("The `core` package of this project does every step; run from the repository's root, "
         "or put it on `PYTHONPATH`.", imports),
        _data_cell(r, folder),
        ("Stage 0 (not private): the model, the exact fit θ(Pₙ) of (1) and its Hessian, after projecting the rows "
         "onto the declared domain.",
         f"MODEL = {_call('ModelSpec', loss=m.loss, domain=m.domain, radius=m.radius, lam_reg=m.lam_reg)}\n"
         "problem = prepare_spec(data, MODEL, DATA)"),
        ("The coefficient uᵀθ(Pₙ) to release and the total budget, split into the stages by basic composition "
         "(Lemma 2.5) or privacy-loss distributions.",
         f"{_target_line(r)}\n"
         f"BUDGET = make_budget({_lit(b.epsilon_total)}, {_lit(b.delta_total)}, {_lit(tuple(b.weights or b.split))}, "
         f"{_lit(b.accounting)})"),
        ("Stages 1–4: the certified λ̂min (Algorithm 2) and λ̂max (Algorithm 4), the stability test (14), and the "
         "release T = uᵀθ(Pₙ) + σ(ε_c, δ_c)·ω(u∣Pₙ)·Z of Algorithm 5 with its private interval.",
         f"SEED = {seed}\n"
         f"run = run_private(problem, COEFFICIENT, BUDGET, make_rng(SEED), {_lit(r.calibration)}, {_lit(r.level)},\n"
         f"                  fallback={_lit(r.fallback)})"),
        ("What was released: the value (or ⊥), the interval and what it covers, and the test's outcome.",
         "release, test = run.release, run.test\n"
         "print(\"status:\", release.status)\n"
         "print(\"value:\", repr(release.value) if release.value is not None else \"⊥ (nothing released)\")\n"
         "print(\"interval:\", repr(release.interval), \"at level\", release.interval_level)\n"
         "print(\"covers:\", release.interval_note)\n"
         "print(\"test (14):\", \"passed\" if test.passed else \"failed\", \"-\", test.reason)"),
    ]


SCRIPT_FOLDER = ("script", "Path(__file__).resolve().parent")
NOTEBOOK_FOLDER = ("notebook", "Path.cwd()")  # Jupyter runs a notebook in its own folder


def _comment(text: str) -> str:
    """Markdown text as comment lines of at most 100 characters (the texts hold no user string)."""
    return "\n".join(f"# {line}" for line in textwrap.wrap(text.replace("`", ""), 98))


def script(r: ReleasePlan) -> str:
    """A standalone Python script: the header in comments, then every stage's code."""
    head = "\n".join(f"# {line}" for line in _header(r))
    body = "\n\n".join(f"{_comment(text)}\n{code}" for text, code in cells(r, SCRIPT_FOLDER))
    return f"{head}\n\n{body}\n"


def notebook(r: ReleasePlan) -> str:
    """The same code as a Jupyter notebook (nbformat 4): a markdown cell before each stage's code cell."""
    def source(text: str) -> list[str]:
        return text.splitlines(keepends=True)

    out = [dict(cell_type="markdown", metadata={}, source=source("\n\n".join(_header(r))))]
    for text, code in cells(r, NOTEBOOK_FOLDER):
        out.append(dict(cell_type="markdown", metadata={}, source=source(text)))
        out.append(dict(cell_type="code", metadata={}, execution_count=None, outputs=[], source=source(code)))
    doc = dict(cells=out, metadata=dict(kernelspec=dict(name="python3", display_name="Python 3", language="python"),
                                        language_info=dict(name="python")), nbformat=4, nbformat_minor=4)
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def download_name(r: ReleasePlan, suffix: str) -> str:
    """reproduce_<coefficient><suffix>, the coefficient's name made safe for a file name."""
    name = r.name if isinstance(r.target, int) else "u"
    return f"reproduce_{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('_.') or 'u'}{suffix}"
