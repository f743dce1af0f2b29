"""Data specs, populations and the model spec: one identity for which data and which model.

The census records here come from the SYNTHETIC files in tests/data (tests/data/README.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import pytest

from core.cli import build_parser, main, spec_from_args
from core.data import Dataset, acs
from core.data.spec import AcsSpec, CsvSpec, PumsSpec, SyntheticSpec, file_spec, is_pums, model_loss
from core.errors import DataError, InputError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import make_rng, prepare, prepare_spec, run_private
from core.methods.compare import Comparison, MethodTrials, compare
from core.privacy.accounting import STAGES, split_budget
from core.privacy.marks import NOT_PRIVATE, not_private
from core.privacy.population import Population
from core.report import compare_document, compare_not_private, private_report, release_document

DATA = Path(__file__).parent / "data"
CA_FILE = DATA / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
MI_FILE = DATA / "SYNTHETIC_psam_p26_MI_2018_1-Year.csv"
CA_FILTERED, MI_FILTERED = 198, 202  # records of the fixtures that pass ACSIncome's filter (tests/data/README.md)


@pytest.fixture
def root(tmp_path):
    """A census folder laid out as folktables expects."""
    for state, src in {"CA": CA_FILE, "MI": MI_FILE}.items():
        dst = acs.census_path(tmp_path / "census", state)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    return tmp_path / "census"


def csv_bytes(rows: int = 300, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (rows, 2))
    y = X @ [0.5, -0.3] + 0.1 * rng.standard_normal(rows)
    lines = "\n".join(f"{a:.6f},{b:.6f},{c:.6f}" for (a, b), c in zip(X, y, strict=True))
    return f"x0,x1,y\n{lines}\n".encode()


# ---------------------------------------------------------------- describe: public words only


def test_census_description_holds_no_count(root):
    for spec in (AcsSpec(("CA",), root=str(root)), AcsSpec(("CA", "MI"), root=str(root), n=150, sample_seed=3)):
        data = spec.load()
        text = spec.describe()
        assert data.source == text
        for count in (CA_FILTERED, MI_FILTERED, CA_FILTERED + MI_FILTERED):
            assert str(count) not in text
        assert str(root) not in text  # where the files live is not about the people
        assert sum(data.counts.values()) and "counts" in not_private(data)
    assert AcsSpec(("CA",), root=str(root)).load().counts == {"filtered_records": CA_FILTERED}
    assert "2018 1-Year" in spec.describe() and "CA, MI" in spec.describe()
    assert "a sample of 150 drawn without replacement (seed 3)" in spec.describe()


def test_loaders_keep_counts_out_of_the_source(root):
    data = acs.load_acs_income(["CA", "MI"], root=root)
    assert str(CA_FILTERED + MI_FILTERED) not in data.source
    assert data.counts == {"filtered_records": CA_FILTERED + MI_FILTERED}
    pums = acs.read_pums(CA_FILE)
    assert str(CA_FILTERED) not in pums.source.replace(str(CA_FILE), "") and pums.counts["filtered_records"] == 198


def test_file_descriptions_hold_no_digest_and_no_content():
    content = CA_FILE.read_bytes()
    spec = PumsSpec.from_bytes("psam_p06.csv", content)
    data = spec.load(content)
    text = spec.describe()
    assert data.source == text and "psam_p06.csv" in text
    assert spec.digest not in text and spec.digest[:8] not in text
    assert str(CA_FILTERED) not in text and data.counts == {"filtered_records": CA_FILTERED}
    csv = CsvSpec.from_bytes("mine.csv", csv_bytes())
    assert csv.describe() == "CSV file mine.csv" and csv.digest[:8] not in csv.describe()
    assert csv.population().describe() == "the rows of the file mine.csv"


def test_synthetic_description_is_its_settings():
    spec = SyntheticSpec("logistic", 3000, 2, theta_norm=2.0, sample_seed=4)
    data = spec.load()
    assert data.source == spec.describe()
    assert "logistic" in spec.describe() and "seed 4" in spec.describe() and "‖θ*‖₂ = 2" in spec.describe()
    assert "Laplace" not in spec.describe() and "Laplace" in SyntheticSpec().describe()


# ---------------------------------------------------------------- population: the people


def test_census_population_ignores_sampling_folders_and_downloads(tmp_path, root):
    base = AcsSpec(("CA", "MI"), 2018, "1-Year")
    variants = [
        AcsSpec(("CA", "MI"), 2018, "1-Year", root=str(root)),
        AcsSpec(("MI", "CA"), 2018, "1-Year", root=str(tmp_path)),
        AcsSpec(("CA", "MI"), n=150, sample_seed=3),
        AcsSpec(("CA", "MI"), n=5000, sample_seed=9, with_replacement=True),
        AcsSpec(("CA", "MI"), download=True),
        AcsSpec("ca, mi", root=""),
    ]
    assert len({base, *variants}) > 1  # the specs differ: they load different rows
    assert {v.population() for v in variants} == {base.population()}
    assert base.population() == Population("acs", (("CA", "MI"), 2018, "1-Year"))
    assert base.population().describe() == "the persons of the ACS 2018 1-Year person files of CA, MI"
    others = [AcsSpec(("CA",)), AcsSpec(("MI",)), AcsSpec(("CA", "MI"), 2019), AcsSpec(("CA", "MI"), horizon="5-Year")]
    assert len({o.population() for o in others} | {base.population()}) == 5
    assert base.population().parts() == (AcsSpec(("CA",)).population(), AcsSpec(("MI",)).population())


def test_repeated_states_are_read_once(root):
    spec = AcsSpec(("CA", "ca", " CA "), root=str(root))
    assert spec.states == ("CA",) and spec.load().n == CA_FILTERED


def test_upload_population_is_its_rows_not_its_bytes(tmp_path):
    content = csv_bytes()
    upload = CsvSpec.from_bytes("mine.csv", content)
    (tmp_path / "renamed.csv").write_bytes(content)
    on_disk = CsvSpec.from_path(tmp_path / "renamed.csv")
    assert upload.digest == hashlib.sha256(content).hexdigest()  # the bytes still check that a file is unchanged
    assert on_disk.population() == upload.population() and on_disk != upload  # another name, the same rows
    assert CsvSpec.from_bytes("mine.csv", csv_bytes(seed=1)).population() != upload.population()
    pums = CA_FILE.read_bytes()
    as_pums = PumsSpec.from_bytes("a.csv", pums, n=50, sample_seed=1)
    assert as_pums.population() == PumsSpec.from_path(CA_FILE).population() == Population.census(("CA",), 2018,
                                                                                                    "1-Year")
    assert as_pums != PumsSpec.from_bytes("a.csv", pums)  # another sample of the same people


def edits(content: bytes) -> dict[str, bytes]:
    """Trivial edits of a CSV that leave its people as they were."""
    header, *rows = content.decode().strip().split("\n")
    cells = [r.split(",") for r in rows]
    return {
        "a column renamed": ("a,x1,y\n" + "\n".join(rows) + "\n").encode(),
        "columns reordered": ("y,x1,x0\n" + "\n".join(f"{c},{b},{a}" for a, b, c in cells) + "\n").encode(),
        "rows reversed": (header + "\n" + "\n".join(rows[::-1]) + "\n").encode(),
        "y rescaled (dollars to thousands)": (header + "\n" + "\n".join(
            f"{a},{b},{float(c) / 1000:.9g}" for a, b, c in cells) + "\n").encode(),
        "y negated and shifted": (header + "\n" + "\n".join(
            f"{a},{b},{40 - 3 * float(c):.12g}" for a, b, c in cells) + "\n").encode(),
        "re-encoded (CRLF, BOM, quotes, no trailing newline)": ("\ufeff" + header + "\r\n" + "\r\n".join(
            ",".join(f'"{float(v)!r}"' for v in c) for c in cells)).encode(),
    }


@pytest.mark.parametrize("edit", list(edits(csv_bytes())))
def test_a_trivial_edit_of_a_csv_keeps_its_people(edit):
    original = CsvSpec.from_bytes("mine.csv", csv_bytes())
    edited = CsvSpec.from_bytes("mine (2).csv", edits(csv_bytes())[edit])
    assert edited.digest != original.digest and edited.population() == original.population()


def test_the_census_people_are_one_population_by_every_route(tmp_path, root):
    """The census folder, the person file itself, the file with a trailing newline or an unused column renamed:
    the CA persons of the 2018 survey, one budget. A 5-Year file shares its five 1-Year surveys' people."""
    census = AcsSpec(("CA",), root=str(root)).population()
    content = CA_FILE.read_bytes()
    header, rest = content.split(b"\n", 1)
    variants = [content, content + b"\n", header.replace(b"DIVISION", b"DIVISION_X") + b"\n" + rest]
    for variant in variants:
        assert PumsSpec.from_bytes("upload.csv", variant).population() == census
        assert file_spec("upload.csv", variant).population() == census
    five = Population.census(("CA",), 2019, "5-Year")
    assert census in five.parts() and Population.census(("CA",), 2013, "1-Year") not in five.parts()


def test_a_person_file_that_names_no_people_is_refused():
    content = CA_FILE.read_bytes()
    header, rest = content.split(b"\n", 1)
    nameless = header.replace(b",ST,", b",STATE,") + b"\n" + rest
    spec = PumsSpec.from_bytes("x.csv", nameless)
    for call in (lambda: spec.load(nameless), spec.population):
        with pytest.raises(DataError, match="ST") as err:
            call()
        assert err.value.setting == "pums"


def test_file_specs_are_small_hashable_and_load_what_they_name(tmp_path):
    content = csv_bytes()
    spec = CsvSpec.from_bytes("mine.csv", content)
    assert hash(spec) == hash(CsvSpec.from_bytes("mine.csv", content))
    assert all(not isinstance(getattr(spec, f.name), bytes) for f in fields(spec)) and len(repr(spec)) < 200
    assert spec.load(content).n == 300
    with pytest.raises(DataError, match="was not given"):
        spec.load()
    with pytest.raises(DataError, match="has changed"):
        spec.load(csv_bytes(seed=1))
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    on_disk = CsvSpec.from_path(path)
    np.testing.assert_array_equal(on_disk.load().X, spec.load(content).X)
    path.write_bytes(csv_bytes(seed=2))
    with pytest.raises(DataError, match="has changed since it was chosen"):
        on_disk.load()
    with pytest.raises(DataError, match="data file not found"):
        CsvSpec.from_path(tmp_path / "none.csv")
    with pytest.raises(DataError, match="file not found"):
        PumsSpec.from_path(tmp_path / "none.csv")


def test_uploads_are_told_apart_by_their_header():
    pums, plain = CA_FILE.read_bytes(), csv_bytes()
    assert is_pums(pums) and not is_pums(plain)
    assert isinstance(file_spec("p.csv", pums), PumsSpec) and isinstance(file_spec("c.csv", plain), CsvSpec)


def test_synthetic_population_is_every_setting():
    spec = SyntheticSpec("robust", 3000, 2, sample_seed=1)
    assert spec.population() == SyntheticSpec("robust", 3000, 2, sample_seed=1).population()
    changed = [SyntheticSpec("robust", 3001, 2, sample_seed=1), SyntheticSpec("robust", 3000, 2, sample_seed=2),
               SyntheticSpec("logistic", 3000, 2, sample_seed=1), SyntheticSpec("robust", 3000, 3, sample_seed=1),
               SyntheticSpec("robust", 3000, 2, theta_norm=2.0, sample_seed=1)]
    assert spec.population() not in {c.population() for c in changed}


def test_an_unseeded_draw_is_called_unseeded_never_seed_none(tmp_path, capsys):
    """A publication drawn with --synthetic and no --sample-seed: its document, its ledger entry and the ledger's
    account word the draw as "unseeded", as the spec's description does."""
    spec = SyntheticSpec("robust", 3000, 2, sample_seed=None)
    assert "unseeded" in spec.describe() and "unseeded" in spec.population().describe()
    assert "unseeded" in spec.load().source and "seed 5" in SyntheticSpec(sample_seed=5).population().describe()
    ledger = str(tmp_path / "ledger.sqlite3")
    assert main(["release", "--synthetic", "--n", "3000", "--d", "2", "--coordinate", "0", "--epsilon", "4",
                 "--delta", "1e-6", "--ledger", ledger]) == 0
    for command in (["show"], ["publications"], ["export"]):
        assert main(["ledger", *command, "--ledger", ledger]) == 0
    printed = capsys.readouterr().out
    assert "unseeded" in printed and "seed None" not in printed


def test_the_source_fixes_the_loss_where_it_can():
    assert SyntheticSpec("logistic").fixed_loss == "logistic"
    assert AcsSpec(("CA",)).fixed_loss == PumsSpec("0" * 64, "p.csv").fixed_loss == "logistic"
    assert CsvSpec("0" * 64, "c.csv").fixed_loss is None
    assert model_loss(CsvSpec("0" * 64, "c.csv"), None) == "robust"
    assert model_loss(CsvSpec("0" * 64, "c.csv"), "logistic") == "logistic"
    assert model_loss(AcsSpec(("CA",)), None) == model_loss(AcsSpec(("CA",)), "logistic") == "logistic"
    with pytest.raises(InputError, match="pass --loss logistic"):
        model_loss(AcsSpec(("CA",)), "robust")


# ---------------------------------------------------------------- the model spec


def test_model_spec_fixes_the_ball_radius_once():
    assert ModelSpec("robust", "ball").resolve(5) == ModelSpec("robust", "ball", math.sqrt(5), 0.0)
    assert ModelSpec("robust", "ball", 2).resolve(5).radius == 2.0
    assert ModelSpec("logistic").resolve(5) == ModelSpec("logistic", "cube", None, 0.0)
    resolved = ModelSpec("robust", "ball", lam_reg=1e-3).resolve(9)
    assert resolved.resolve(9) == resolved and resolved.radius == 3.0 and hash(resolved)
    with pytest.raises(DataError, match="applies to --domain ball only"):
        ModelSpec("robust", "cube", 2.0).resolve(3)
    with pytest.raises(DataError, match="ball radius must be a positive number"):
        ModelSpec("robust", "ball", -1.0).resolve(3)
    with pytest.raises(DataError, match="unknown domain"):
        ModelSpec("robust", "sphere").resolve(3)
    with pytest.raises(DataError, match="unknown loss"):
        ModelSpec("hinge").resolve(3)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(DataError, match="lambda_reg must be a finite number >= 0"):
            ModelSpec("robust", lam_reg=bad).resolve(3)


def test_a_problem_on_the_ball_reports_the_radius_it_used():
    spec = SyntheticSpec("robust", 4000, 4, sample_seed=2)
    data = spec.load()
    problem = prepare_spec(data, ModelSpec("robust", "ball"), spec)
    assert problem.model.radius == problem.geometry.radius == problem.geometry.r == 2.0
    assert problem.clipped_rows == 0  # the smallest ball around the cube clips no cube-shaped row
    assert problem.data_spec == spec and problem.model == ModelSpec("robust", "ball", 2.0, 0.0)
    loose = prepare(data.X, data.y, "robust", "ball")
    assert loose.model == problem.model and loose.data_spec is None
    assert prepare(data.X, data.y).model == ModelSpec("robust", "cube", None, 0.0)


def test_documents_print_the_radius_of_the_fit():
    spec = SyntheticSpec("robust", 4000, 4, sample_seed=2)
    data = spec.load()
    budget = split_budget(4.0, 1e-6)
    for model, radius in ((ModelSpec("robust", "ball"), 2.0), (ModelSpec("robust", "ball", 3.0), 3.0),
                          (ModelSpec("robust"), None)):
        problem = prepare_spec(data, model, spec)
        run = run_private(problem, 0, budget, make_rng(0))
        doc = release_document(problem, 0, [run])
        assert doc["radius"] == radius == problem.model.radius
        assert doc["source"] == spec.describe() and doc["domain"] == model.domain and doc["loss"] == "robust"
        report = private_report(run, "x0", budget, spec.describe(), problem.n, problem.d, model=problem.model)
        assert report["data"]["radius"] == radius and report["data"]["domain"] == model.domain
        assert report["data"]["lambda_reg"] == 0.0 and report["data"]["loss"] == "robust"
    with pytest.raises(TypeError, match="not both"):
        private_report(run, "x0", budget, "s", problem.n, problem.d, model=problem.model, radius=1.0)


# ---------------------------------------------------------------- the command line


def test_command_line_builds_specs(tmp_path, root):
    parse = build_parser().parse_args
    common = ["--coordinate", "0", "--epsilon", "1", "--delta", "1e-6"]
    acs_args = parse(["release", "--acs-root", str(root), "--state", "CA", "--n", "50", "--sample-seed", "1",
                      "--download", *common])
    assert spec_from_args(acs_args) == AcsSpec(("CA",), 2018, "1-Year", str(root), 50, 1, True, False, "centred")
    synth = parse(["release", "--synthetic", "--n", "500", "--d", "2", "--loss", "logistic", *common])
    assert spec_from_args(synth) == SyntheticSpec("logistic", 500, 2, 1.0, 1.0, None)
    path = tmp_path / "c.csv"
    path.write_bytes(csv_bytes())
    assert spec_from_args(parse(["release", "--data", str(path), *common])).population() == CsvSpec.from_bytes(
        "other.csv", csv_bytes()).population()
    pums = spec_from_args(parse(["release", "--pums", str(CA_FILE), "--n", "20", *common]))
    assert isinstance(pums, PumsSpec) and pums.n == 20


def test_command_line_documents_use_the_description(root, capsys):
    args = ["release", "--acs-root", str(root), "--state", "CA", "--coordinate", "hours", "--epsilon", "4",
            "--delta", "1e-6", "--seed", "1"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == AcsSpec(("CA",), root=str(root), encoding="centred").describe()
    assert doc["loss"] == "logistic"
    assert str(CA_FILTERED) not in doc["source"]
    assert main([*args, "--loss", "robust"]) == 2
    err = capsys.readouterr().err
    assert "logistic" in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- marks to the end


def test_budget_lists_its_stages_in_order():
    b = split_budget(3.0, 1e-6, (1.0, 2.0, 3.0))
    assert [name for name, _ in b.stages()] == list(STAGES) == ["lambda_min", "lambda_max", "release"]
    assert [s for _, s in b.stages()] == [b.lambda_min, b.lambda_max, b.release]


def test_dataset_marks_what_was_counted_on_the_data():
    assert not_private(Dataset) == {"X", "y", "counts"}


@pytest.fixture(scope="module")
def comparison():
    spec = SyntheticSpec("robust", 5000, 2, sample_seed=3)
    problem = prepare_spec(spec.load(), ModelSpec("robust"), spec)
    result = compare(problem, 0, split_budget(4.0, 1e-6), 2, make_rng(0), ("local", "oracle", "output_perturbation"))
    return problem, result


def test_compare_not_private_is_derived_from_the_marks(comparison):
    problem, result = comparison
    doc = compare_document(problem, 0, result)
    assert doc["not_private"] == compare_not_private(result)
    assert not_private(Comparison) == {"u_theta", "full_vector"}
    assert not_private(MethodTrials) == {"noise_scale", "seconds"}
    expected = {
        "targets.u_theta_fit", "methods.*.errors", "full_vector.*.l2_errors_vs_fit",
        "methods.*.noise_scale", "full_vector.*.noise_scale", "methods.*.median_seconds",
        "full_vector.*.median_seconds", "methods.oracle",
    }
    assert set(doc["not_private"]) == expected
    # every path listed before the marks still is, or is covered by a wildcard
    for old in ("targets.u_theta_fit", "methods.oracle", "methods.*.errors", "methods.local.noise_scale"):
        assert old in expected or old.replace("local", "*") in expected


def test_a_new_marked_field_shows_up(comparison):
    problem, result = comparison

    @dataclass(frozen=True)
    class Wider(Comparison):
        residual_sum: float = field(default=0.0, metadata=NOT_PRIVATE)

    wider = Wider(**{f.name: getattr(result, f.name) for f in fields(result)}, residual_sum=1.0)
    assert "residual_sum" in compare_document(problem, 0, wider)["not_private"]
    assert "residual_sum" not in compare_document(problem, 0, result)["not_private"]


def test_census_rows_lie_in_their_encodings_ball_which_is_the_default_ball():
    """||x||_2 <= 3 follows from the paper's encoding (the worst case attains it), <= 2.3503 from the centred one; the
    ball defaults to the spec's encoding's radius for census data."""
    import math

    from core.data.acs import encode_features
    from core.data.encoding import RADII, encode
    from core.estimator.model import ModelSpec
    from core.mechanisms.pipeline import prepare_spec

    worst = {"AGEP": [30.0], "WKHP": [1.0], "SCHL": [1.0], "RAC1P": [1.0], "OCCP": [10.0], "MAR": [1.0],
             "SEX": [2.0], "COW": [3.0]}
    x = encode_features({k: np.array(v) for k, v in worst.items()})
    assert math.isclose(float(np.linalg.norm(x)), RADII["paper"])
    assert math.isclose(float(np.linalg.norm(encode(x, "centred"))), RADII["centred"], rel_tol=1e-4)
    for encoding in ("paper", "centred"):
        spec = PumsSpec.from_path(CA_FILE, encoding=encoding)
        data = spec.load()
        assert float(np.max(np.linalg.norm(data.X, axis=1))) <= RADII[encoding]
        problem = prepare_spec(data, ModelSpec("logistic", "ball"), spec)
        assert problem.model.radius == RADII[encoding] and problem.clipped_rows == 0
    assert ModelSpec("logistic", "ball").resolve(17).radius == math.sqrt(17)  # without a source's bound
