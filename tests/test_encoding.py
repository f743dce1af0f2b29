"""The census encodings (core.data.encoding): the radius each states is the largest ||x||_2 any row can have, the
centred one's constants are each block's best, and every coefficient but the intercept is the paper's."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from core.data.acs import encode_features
from core.data.encoding import (
    CENTRED_INTERCEPT,
    CENTRES,
    DEFAULT_ENCODING,
    FEATURE_NAMES,
    GROUPS,
    LONE,
    RADII,
    encode,
    feature_names,
)
from core.data.spec import AcsSpec, SyntheticCensusSpec
from core.errors import DataError
from core.estimator.fit import fit
from core.estimator.losses import get_loss


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """A per-user cache of the test's own ($XDG_CACHE_HOME): the SYNTHETIC samples made here are written there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def every_kind_of_row() -> np.ndarray:
    """One row for each combination of the encoding's extreme values, from census columns through the real encoder:
    each lone indicator 0 or 1, hours and schooling at either end of their range (or schooling missing), each of the 8
    occupation levels (the reference one, or none, all zero) and each of the 4 classes of worker."""
    cols: dict[str, list[float]] = {c: [] for c in ("AGEP", "WKHP", "SCHL", "RAC1P", "OCCP", "MAR", "SEX", "COW")}
    occupations = (10.0, 1005.0, 2001.0, 3000.0, 3601.0, 4700.0, 6005.0, 9000.0)  # groups 1-7, then the reference
    for age, hours, school, race, occ, mar, sex, cow in itertools.product(
            (30.0, 70.0), (1.0, 99.0), (1.0, 24.0, np.nan), (1.0, 2.0), occupations, (1.0, 2.0), (1.0, 2.0),
            (1.0, 3.0, 6.0, 8.0)):
        for key, value in zip(cols, (age, hours, school, race, occ, mar, sex, cow), strict=True):
            cols[key].append(value)
    return encode_features({k: np.array(v) for k, v in cols.items()})


def test_each_radius_is_the_largest_norm_of_any_row():
    X = every_kind_of_row()
    assert X.shape == (2 * 2 * 3 * 2 * 8 * 2 * 2 * 4, 17)
    paper = np.linalg.norm(encode(X, "paper"), axis=1)
    centred = np.linalg.norm(encode(X, "centred"), axis=1)
    assert paper.max() == RADII["paper"] == 3.0
    assert math.isclose(float(centred.max()), math.sqrt(116 / 21), rel_tol=1e-12)
    assert centred.max() <= RADII["centred"] < centred.max() + 1e-4  # rounded up, by less than 1e-4


@pytest.mark.parametrize("step", [-0.01, 0.01])
def test_each_blocks_centre_is_its_best(step):
    """Moving any block's constant either way makes some row longer: the centres minimise the radius."""
    X = every_kind_of_row()
    best = float(np.linalg.norm(encode(X, "centred"), axis=1).max())
    names = list(FEATURE_NAMES)
    for block in [(name,) for name in LONE] + [tuple(g) for g in GROUPS]:
        moved = np.array(CENTRES)
        moved[[names.index(name) for name in block]] += step
        assert float(np.linalg.norm(X - moved, axis=1).max()) > best + 1e-6, block


def test_centring_keeps_every_coefficient_but_the_intercept():
    """The same logistic fit on both encodings: the same coefficients, and the intercept moved by sum_j c_j theta_j."""
    rng = np.random.default_rng(3)
    X = every_kind_of_row()[rng.integers(0, 2 * 2 * 3 * 2 * 8 * 2 * 2 * 4, size=4000)]
    y = np.where(rng.random(4000) < 1.0 / (1.0 + np.exp(-(X @ rng.normal(0, 0.5, 17)))), 1.0, -1.0)
    loss = get_loss("logistic")
    fits = [fit(encode(X, name), y, loss, 0.0, radius=RADII[name]) for name in ("paper", "centred")]
    assert all(f.has_minimiser and np.all(np.isfinite(f.theta)) for f in fits)
    paper, centred = (f.theta for f in fits)
    np.testing.assert_allclose(centred[1:], paper[1:], rtol=0, atol=1e-7)
    assert math.isclose(centred[0], paper[0] + float(np.dot(CENTRES, paper)), abs_tol=1e-7)
    assert not math.isclose(centred[0], paper[0], abs_tol=1e-3)  # the intercept's meaning does change


def test_the_app_and_the_command_line_centre_census_data_and_code_keeps_the_papers(tmp_path):
    """The default of the app, the command line and a link is centred; a spec built in code without an encoding keeps
    the paper's, so a script written for it rebuilds the same rows."""
    from core.cli import build_parser, spec_from_args
    from ui.params import PARAMS

    args = build_parser().parse_args(["release", "--census-sample", "2000", "--state", "MI", "--coordinate", "female",
                                      "--epsilon", "1", "--delta", "1e-6"])
    assert spec_from_args(args).encoding == PARAMS["encoding"].default == DEFAULT_ENCODING == "centred"
    assert SyntheticCensusSpec(("MI",), rows=2000).encoding == "paper"
    spec = SyntheticCensusSpec(("MI",), rows=2000, encoding="centred")
    assert spec.public_radius == RADII["centred"] and "centred encoding" in spec.describe()
    paper = SyntheticCensusSpec(("MI",), rows=2000, encoding="paper")
    assert paper.public_radius == 3.0 and "paper's encoding" in paper.describe()
    assert paper != spec and hash(paper) != hash(spec)  # which data: a key of caches and staleness
    assert paper.population() == spec.population()  # whose budget: the same people either way
    data, data_paper = spec.load(), paper.load()
    assert data.feature_names == feature_names("centred") and data.feature_names[0] == CENTRED_INTERCEPT
    assert data_paper.feature_names == FEATURE_NAMES
    np.testing.assert_array_equal(data.X, data_paper.X - np.asarray(CENTRES))
    assert float(np.linalg.norm(data.X, axis=1).max()) <= RADII["centred"]
    with pytest.raises(DataError) as err:
        AcsSpec(("MI",), root=str(tmp_path), encoding="standardised")
    assert err.value.setting == "encoding" and "centred, paper" in str(err.value)


def test_neighbours_one_extreme_row_apart_end_alike_in_the_centred_ball():
    """An attacker's pair on centred census rows: the last row replaced by a row at the centred ball's edge (every
    block at its farthest point) with the other label. With the same noise seed both sides fall back, both certify the
    curvature, and the released values lie within objective perturbation's sensitivity 2 G0/(n lam) of each other (the
    same b moves the minimiser of a lam-strongly convex objective by at most the gradient's change over n lam)."""
    from core.estimator.model import ModelSpec
    from core.mechanisms.pipeline import make_rng, prepare_spec, run_private
    from core.privacy.accounting import RELEASE_SPLIT, make_budget
    from core.privacy.gaussian import DEFAULT_CALIBRATION

    spec = SyntheticCensusSpec(("MI",), rows=30_000, encoding="centred")
    data = spec.load()
    edge = encode(encode_features({"AGEP": np.array([30.0]), "WKHP": np.array([1.0]), "SCHL": np.array([1.0]),
                                   "RAC1P": np.array([1.0]), "OCCP": np.array([10.0]), "MAR": np.array([1.0]),
                                   "SEX": np.array([2.0]), "COW": np.array([3.0])}), "centred")
    X2, y2 = data.X.copy(), data.y.copy()
    X2[-1], y2[-1] = edge[0], -y2[-1]
    model = ModelSpec("logistic", "ball")
    budget = make_budget(8.0, 1e-6, RELEASE_SPLIT)
    runs = []
    for X, y in ((data.X, data.y), (X2, y2)):
        problem = prepare_spec(replace(data, X=X, y=y), model, spec)
        assert problem.clipped_rows == 0
        runs.append((problem, run_private(problem, "female", budget, make_rng(11), DEFAULT_CALIBRATION, fallback=True)))
    (p, a), (_, b) = runs
    assert a.release.status == b.release.status == "fallback"
    assert a.release.fallback_curvature.bound is not None and b.release.fallback_curvature.bound is not None
    lam = a.release.fallback_lambda_reg
    assert lam == b.release.fallback_lambda_reg
    assert 0 < abs(a.release.value - b.release.value) <= 2.0 * p.geometry.G0 / (p.n * lam)


def test_the_paper_intercept_asked_of_centred_data_names_the_encoding(capsys):
    from core.cli import main

    code = main(["release", "--census-sample", "2000", "--state", "MI", "--coordinate", "intercept", "--epsilon", "2",
                 "--delta", "1e-6"])  # centred: the command line's default
    err = capsys.readouterr().err
    assert code != 0 and f"whose intercept is {CENTRED_INTERCEPT}" in err and "(--encoding)" in err
