"""The Data page, driven through Streamlit's AppTest from the app's entry point."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.data import acs, synthetic
from ui.loaded import Upload
from ui.theme import NOT_PRIVATE

CA_FILE = Path(__file__).resolve().parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
N = 20_000  # small enough to keep every run fast


def open_data_page(**settings: object) -> AppTest:
    """The app with n = N, then the given session values, then the Data page."""
    at = new_app(60)
    at.session_state["n"] = N
    at.run()  # the first run registers the pages of st.navigation; switch_page needs them
    for key, value in settings.items():
        at.session_state[key] = value
    return at.switch_page("pages/data.py").run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at: AppTest, label: str) -> str:
    (value,) = [m.value for m in at.main.metric if m.label == label]
    return value


def census_root(tmp_path: Path) -> Path:
    """A census folder laid out as folktables does, holding the SYNTHETIC California file."""
    folder = tmp_path / "2018" / "1-Year"
    folder.mkdir(parents=True)
    shutil.copy(CA_FILE, folder / "psam_p06.csv")
    return tmp_path


def plain_csv(rows: int = 300, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(rows, 2))
    y = X @ np.array([0.5, -0.3]) + rng.laplace(size=rows)
    lines = ["a,b,y", *(f"{a},{b},{t}" for (a, b), t in zip(X, y, strict=True))]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("source", ["synthetic_robust", "synthetic_logistic"])
def test_synthetic_sources_show_the_data(source):
    at = open_data_page(source=source)
    assert_clean(at)
    loss = source.removeprefix("synthetic_")
    data = synthetic(N, 5, loss, 1.0, 1.0, 0)
    assert metric(at, "n") == f"{N:,}"
    assert metric(at, "d") == "5"
    assert "Features: x0, x1, x2, x3, x4" in [c.value for c in at.caption]
    preview = at.dataframe[-1].value
    np.testing.assert_allclose(preview[list(data.feature_names)].to_numpy(), data.X[:20])
    np.testing.assert_allclose(preview["y"].to_numpy(), data.y[:20])
    assert at.get("plotly_chart")
    if loss == "logistic":
        assert metric(at, "Share of y = +1") == f"{np.mean(data.y == 1):.1%}"
    else:
        stats = at.dataframe[0].value
        assert stats.loc["y", "mean"] == pytest.approx(data.y.mean())
        assert stats.loc["y", "median"] == pytest.approx(np.median(data.y))


def test_every_row_is_inside_the_cube():
    at = open_data_page()
    assert metric(at, "Rows projected onto the domain") == "0 (0.0%)"


def test_resample_draws_the_next_seed():
    at = open_data_page()
    first = at.dataframe[-1].value
    at.button(key="resample").click().run()
    assert_clean(at)
    assert at.session_state["sample_seed"] == 1
    assert not first.equals(at.dataframe[-1].value)


def test_histogram_of_the_response():
    at = open_data_page()
    at.selectbox(key="data_histogram").select("y").run()
    assert_clean(at)
    assert at.get("plotly_chart")


def test_acs_from_a_census_folder(tmp_path):
    at = open_data_page(source="acs", acs_root=str(census_root(tmp_path)))
    assert_clean(at)
    population = acs.read_pums(CA_FILE.read_bytes())
    assert metric(at, "n") == f"{population.n:,}"
    assert metric(at, "d") == "17"
    assert metric(at, "Share of y = +1") == f"{np.mean(population.y == 1):.1%}"


def test_acs_sample_of_size_n(tmp_path):
    at = open_data_page(source="acs", acs_root=str(census_root(tmp_path)), acs_n=150)
    assert_clean(at)
    assert metric(at, "n") == "150"


def test_acs_sample_beyond_the_population_needs_draws_with_replacement(tmp_path):
    """198 people pass the filter: n = 500 is refused without the option, and drawn with it."""
    root = str(census_root(tmp_path))
    at = open_data_page(source="acs", acs_root=root, acs_n=500)
    assert not at.exception
    (error,) = at.error
    assert "draw with replacement" in error.value
    at = open_data_page(source="acs", acs_root=root, acs_n=500, with_replacement=True)
    assert_clean(at)
    assert metric(at, "n") == "500"


def test_missing_census_file_names_the_expected_path(tmp_path):
    at = open_data_page(source="acs", acs_root=str(tmp_path))
    assert not at.exception
    (error,) = at.error
    assert str(tmp_path / "2018" / "1-Year" / "psam_p06.csv") in error.value
    assert "census.gov" in error.value
    assert not at.main.metric


def test_unreachable_census_site_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(acs, "_unreachable", lambda url: "ConnectionError")
    at = open_data_page(source="acs", acs_root=str(tmp_path), download=True)
    assert not at.exception
    (error,) = at.error
    assert "could not be reached (ConnectionError)" in error.value
    assert str(tmp_path / "2018" / "1-Year" / "psam_p06.csv") in error.value


SAMPLE_ROWS = 2_000  # a SYNTHETIC census sample small enough to make in a fraction of a second


@pytest.fixture
def bars(tmp_path, monkeypatch) -> list[tuple[int, str]]:
    """Every progress bar's (value in percent, text) the app draws, with a per-user cache of the test's own
    ($XDG_CACHE_HOME), so no SYNTHETIC sample is written into the user's."""
    from streamlit.delta_generator import DeltaGenerator

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    drawn: list[tuple[int, str]] = []
    original = DeltaGenerator.progress

    def progress(self, value, text=None):
        drawn.append((round(value * 100), text))
        return original(self, value, text)

    monkeypatch.setattr(DeltaGenerator, "progress", progress)
    monkeypatch.setattr(st, "progress", lambda *args, **kwargs: st._main.progress(*args, **kwargs))
    return drawn


def make_sample(at: AppTest, rows: int = SAMPLE_ROWS) -> AppTest:
    at.number_input(key="census_sample_rows").set_value(rows)
    return at.button(key="make_census_sample").click().run()


def test_a_missing_census_file_offers_a_synthetic_sample_made_once(tmp_path, bars):
    """Data page → census source without the state's file → one click makes a SYNTHETIC sample under a progress bar
    and loads it; a second click, and a second session opened by the link, read it without making it again."""
    at = open_data_page(source="acs", acs_root=str(tmp_path / "census"))
    assert not at.exception and "make a SYNTHETIC census sample (“SYNTHETIC records per state”" in at.error[0].value
    assert at.number_input(key="census_sample_rows").value == 50_000  # the default offered
    at = make_sample(at)
    assert_clean(at)
    assert at.session_state["census_sample"] == SAMPLE_ROWS
    texts = [t for _, t in bars if t is not None]
    assert bars[-1][0] == 100 and texts and all("SYNTHETIC census sample of CA (2,000 records per state)" in t
                                                for t in texts)
    assert [t.value for t in at.toast][0].startswith("Made the SYNTHETIC census sample of CA")
    assert any(i.value.startswith("**SYNTHETIC census-like data (no real person).**") for i in at.info)
    assert metric(at, "d") == "17" and int(metric(at, "n").replace(",", "")) < SAMPLE_ROWS
    assert at.status[0].label.startswith(f"Loaded {metric(at, 'n')} rows · SYNTHETIC census-like data")
    sample = acs.census_path(acs.sample_root() / f"rows-{SAMPLE_ROWS}", "CA")
    written = sample.stat().st_mtime_ns
    assert not (tmp_path / "census").exists()  # nothing in the census folder
    bars.clear()
    at = make_sample(at)  # a second click
    assert [t.value for t in at.toast][0].startswith("Reading the SYNTHETIC census sample of CA")
    again = new_app(60, query={"source": "acs", "census_sample": str(SAMPLE_ROWS)})  # a second session
    again.run()
    again = again.switch_page("pages/data.py").run()
    assert_clean(again)
    assert again.session_state["census_sample"] == SAMPLE_ROWS and metric(again, "d") == "17"
    assert bars == [] and sample.stat().st_mtime_ns == written
    again.button(key="use_census_files").click().run()  # back to the census files
    assert again.session_state["census_sample"] is None and "is missing" in again.error[0].value


def test_the_link_keeps_the_sample_and_a_hostile_one_gets_a_notice(bars):
    at = new_app(60, query={"source": "acs"})
    at.run()
    at = at.switch_page("pages/data.py").run()
    assert "census_sample" not in at.query_params
    for link in ("abc", "5", "9999999", "-1", "1e5", "2000.5"):
        hostile = new_app(60, query={"source": "acs", "census_sample": link}).run()
        assert not hostile.exception and hostile.session_state["census_sample"] is None
        notice = " ".join(w.value for w in hostile.sidebar.warning)
        assert f"census_sample={link}" in notice and "default" in notice, link
    kept = new_app(60, query={"source": "acs", "census_sample": str(SAMPLE_ROWS)}).run()
    assert_clean(kept)
    assert kept.query_params["census_sample"] in (str(SAMPLE_ROWS), [str(SAMPLE_ROWS)])


@pytest.mark.parametrize("settings, words", [
    (dict(states="ZZ"), "Unknown state 'ZZ'; name two-letter codes such as CA or MI with “States” on the Data page"),
    (dict(year=2015), "choose a later “Survey year” on the Data page"),
])
def test_a_sample_that_cannot_be_made_says_which_control_to_change(bars, settings, words):
    at = make_sample(open_data_page(source="acs", census_sample=SAMPLE_ROWS, **settings))
    assert not at.exception
    assert any(words in e.value for e in at.error), [e.value for e in at.error]
    assert not list(acs.sample_root().rglob("*.csv"))


def test_a_sample_folder_that_cannot_be_written_is_a_message(tmp_path, bars):
    acs.sample_root().parent.mkdir(parents=True)
    acs.sample_root().write_text("not a folder")  # no folder can be made there, whoever runs the test
    at = make_sample(open_data_page(source="acs", acs_root=str(tmp_path / "census")))
    assert not at.exception and at.session_state["census_sample"] is None
    assert any("could not be written in" in e.value and "XDG_CACHE_HOME" in e.value for e in at.error)


def test_a_census_download_shows_its_megabytes_as_they_arrive(tmp_path, census_site, bars, monkeypatch):
    """Download missing files, from a census site on this machine: a progress bar in megabytes, then the data."""
    from test_acs import publish

    monkeypatch.setattr(acs, "CHUNK_BYTES", 4096)
    publish(census_site, "CA")
    at = open_data_page(source="acs", acs_root=str(tmp_path / "census"), download=True)
    assert_clean(at)
    texts = [t for _, t in bars if t is not None]
    assert len(texts) > 2 and all(re.fullmatch(r"Downloading the census file of CA: \d+\.\d of \d+\.\d MB", t)
                                  for t in texts), texts
    assert bars[-1][0] == 100 and not at.get("progress")  # removed once the file is there
    assert metric(at, "n") == f"{acs.read_pums(CA_FILE).n:,}"
    bars.clear()
    at.run()  # the file is there: no download, no bar
    assert bars == [] and metric(at, "d") == "17"


def test_upload_widget_loads_a_plain_csv():
    at = open_data_page(source="upload", upload_loss="robust")
    assert [i.value for i in at.info] == ["Choose a CSV file to load it."]
    at.file_uploader(key="upload_file").set_value(("mine.csv", plain_csv(), "text/csv")).run()
    assert_clean(at)
    upload = at.session_state["upload"]
    assert (upload.name, upload.content) == ("mine.csv", plain_csv())
    assert metric(at, "n") == "300"
    assert metric(at, "d") == "2"


def test_uploaded_plain_csv_in_the_session():
    at = open_data_page(source="upload", upload=Upload.of("mine.csv", plain_csv(400)), upload_loss="robust")
    assert_clean(at)
    assert metric(at, "n") == "400"
    assert "Features: a, b" in [c.value for c in at.caption]


def test_uploaded_pums_file():
    at = open_data_page(source="upload", upload=Upload.of("psam_p06.csv", CA_FILE.read_bytes()))
    assert_clean(at)
    assert metric(at, "n") == f"{acs.read_pums(CA_FILE.read_bytes()).n:,}"
    assert metric(at, "d") == "17"
    assert all(r.key != "upload_loss" for r in at.radio)


def test_labels_the_loss_cannot_use_leave_the_data_shown():
    at = open_data_page(source="upload", upload=Upload.of("mine.csv", plain_csv()), upload_loss="logistic")
    assert not at.exception
    (error,) = at.error
    assert "Logistic regression needs binary labels" in error.value
    assert metric(at, "n") == "300"
    assert metric(at, "Rows projected onto the domain") == "—"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a,b\n1,2\n3,4\n", "has no column named 'y'"),
        (b"a,y\n1,2\n3,oops\n", "holds text, not a number in data row 2"),
        (b"PINCP,AGEP\n50000,30\n", "is not an ACS PUMS person file"),
    ],
)
def test_malformed_upload_shows_the_message(content, message):
    at = open_data_page(source="upload", upload=Upload.of("bad.csv", content))
    assert not at.exception
    (error,) = at.error
    assert message in error.value
    assert "oops" not in error.value  # no cell of the data is quoted


# ---------------------------------------------------------------- uploads that explain themselves


def unscaled_csv(rows: int = 300, seed: int = 1) -> bytes:
    """Income in dollars and age in years, unscaled: every row lies outside [−1, 1]², and clipping makes the two
    columns equal (both 1), so the projected design is rank-deficient while the raw one is not."""
    rng = np.random.default_rng(seed)
    income = rng.integers(20_000, 120_000, rows)
    age = rng.integers(18, 80, rows)
    y = income / 50_000 - age / 40 + rng.laplace(size=rows)
    lines = ["income,age,y", *(f"{a},{b},{t:.6f}" for a, b, t in zip(income, age, y, strict=True))]
    return ("\n".join(lines) + "\n").encode()


def partly_outside_csv(rows: int = 300, outside: int = 30) -> tuple[bytes, int]:
    """A CSV inside the cube but for `outside` rows (every 10th), whose column a is 1.5; and the rows outside."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(rows, 2))
    X[::rows // outside, 0] = 1.5
    y = X @ np.array([0.5, -0.3]) + rng.laplace(size=rows)
    lines = ["a,b,y", *(f"{a},{b},{t}" for (a, b), t in zip(X, y, strict=True))]
    return ("\n".join(lines) + "\n").encode(), int(np.any(np.abs(X) > 1, axis=1).sum())


def warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


def fitted_losses(at: AppTest) -> set[str]:
    """The losses of the fits the session keeps for the upload (ui.keys.UPLOADED)."""
    return {model.loss for (_, model) in at.session_state["uploaded"] if model is not None}


def test_loss_is_chosen_before_the_upload_and_used():
    at = open_data_page(source="upload")
    radio = at.radio(key="upload_loss")
    assert radio.label == "Loss" and radio.value == "auto"  # offered before any file is chosen: from the label
    at.file_uploader(key="upload_file").set_value(("mine.csv", plain_csv(), "text/csv")).run()
    assert_clean(at)  # a real response: from the label, the robust loss
    assert fitted_losses(at) == {"robust"}
    assert "mine.csv** · CSV, response column y, robust loss" in " ".join(c.value for c in at.caption)
    at = open_data_page(source="upload")
    binary = b"x0,y\n" + b"\n".join(f"{(i % 7) / 7:.3f},{i % 2}".encode() for i in range(400))
    at.file_uploader(key="upload_file").set_value(("two.csv", binary, "text/csv")).run()
    assert_clean(at)  # two values: logistic, and the page says why
    assert fitted_losses(at) == {"logistic"}
    said = " ".join(c.value for c in at.caption)
    assert ("logistic loss (the label y takes two values, so the loss is logistic; set “Loss” on the Data page to "
            "robust") in said
    at = open_data_page(source="upload")
    radio = at.radio(key="upload_loss")
    radio.set_value("robust").run()
    at.file_uploader(key="upload_file").set_value(("mine.csv", plain_csv(), "text/csv")).run()
    assert_clean(at)  # a real response: logistic would have refused it ("needs binary labels")
    assert fitted_losses(at) == {"robust"}
    assert "mine.csv** · CSV, response column y, robust loss" in " ".join(c.value for c in at.caption)


def test_unscaled_upload_says_rows_were_projected_and_to_rescale():
    at = open_data_page(source="upload", upload_loss="robust")
    at.file_uploader(key="upload_file").set_value(("people.csv", unscaled_csv(), "text/csv")).run()
    assert_clean(at)
    text = warnings(at)
    assert "300 of 300 rows (100.0%) lay outside the covariate domain" in text
    assert "and were projected onto it" in text
    assert "rescale your features to \\[−1, 1\\]" in text
    assert "columns with values outside \\[−1, 1\\]: income, age" in text
    # the rank deficiency is put down to the projection, in the same note, and dropping columns is not the advice
    (note,) = [w.value for w in at.warning]
    assert "Projection also made the design rank-deficient (the raw columns have full rank, the projected ones do " \
           "not): the fit θ(Pₙ) has no certified minimiser" in note
    assert "rescale rather than drop columns" in note and "drop redundant columns" not in note
    assert note.endswith(NOT_PRIVATE)  # counted on the raw rows: tagged
    assert metric(at, "Rows projected onto the domain") == "300 (100.0%)"


def test_a_few_rows_outside_are_counted_without_advice():
    content, outside = partly_outside_csv()
    assert outside == 30
    at = open_data_page(source="upload", upload=Upload.of("mine.csv", content), upload_loss="robust")
    assert_clean(at)
    assert not at.warning  # 10% is not "most rows": no advice to rescale
    (note,) = [i.value for i in at.info]
    assert note == f"30 of 300 rows (10.0%) lay outside the covariate domain (the cube \\[−1, 1\\]ᵈ) and were " \
                   f"projected onto it. {NOT_PRIVATE}"


def test_a_redundant_column_is_not_put_down_to_the_projection():
    rng = np.random.default_rng(4)
    a = rng.uniform(-1, 1, 200)
    lines = ["a,twin,y", *(f"{v},{v},{v + rng.laplace()}" for v in a)]
    at = open_data_page(source="upload", upload=Upload.of("twin.csv", ("\n".join(lines) + "\n").encode()),
                        upload_loss="robust")
    assert_clean(at)
    assert not at.info
    (note,) = [w.value for w in at.warning]
    assert note.startswith("No certified minimiser: the design matrix is rank-deficient")
    assert "drop redundant columns" in note and "projection" not in note.lower()


def test_rows_inside_the_domain_need_no_note():
    at = open_data_page(source="upload", upload=Upload.of("mine.csv", plain_csv()), upload_loss="robust")
    assert_clean(at)
    assert not at.warning and not at.info


def test_locked_deployment_shows_no_projection_share(monkeypatch):
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    at = open_data_page(source="upload", upload=Upload.of("people.csv", unscaled_csv()), upload_loss="robust")
    assert not at.exception
    assert "lay outside the covariate domain" not in " ".join(e.value for e in (*at.warning, *at.info))


def test_uploader_points_census_files_to_the_census_folder_source():
    at = open_data_page(source="upload")
    hint = "exceed the 300 MB upload limit: put it in a census folder and load it with the source " \
           "“ACS income (census files)”"
    assert hint in at.file_uploader(key="upload_file").help
    assert any(hint in c.value for c in at.caption)  # before a file is chosen: a bigger one never reaches the page
    at = open_data_page(source="upload", upload=Upload.of("psam_p06.csv", CA_FILE.read_bytes()))
    assert_clean(at)
    assert any(hint in c.value for c in at.caption)


def test_app_messages_name_the_control_not_the_flag(tmp_path):
    at = open_data_page(source="acs", states=" , ")
    (error,) = at.error
    assert "Name at least one state with “States” on the Data page" in error.value
    assert "--" not in error.value
    at = open_data_page(source="acs", acs_root=str(tmp_path))
    (error,) = at.error
    assert "or allow downloads (“Download missing files” on the Data page)" in error.value
    assert "--download" not in error.value
    at = open_data_page(source="acs", acs_root=str(census_root(tmp_path)), acs_n=500)
    (error,) = at.error
    assert "(“Draw with replacement” on the Data page)" in error.value and "--with-replacement" not in error.value


def test_every_setting_a_message_names_has_a_control(tmp_path, monkeypatch):
    """core.errors.SETTINGS are named by ui.labels; the Data page's labels are its widgets' labels (the census
    source's in a folder without the state's file, where the SYNTHETIC sample is offered; a curator's folder's)."""
    from core.data.synthetic import write_folder
    from core.errors import SETTINGS
    from ui.labels import LABELS

    assert set(LABELS) == set(SETTINGS)
    at = open_data_page(source="acs", acs_root=str(tmp_path))
    on_page = {w.label for w in (*at.text_input, *at.number_input, *at.checkbox, *at.radio)}
    write_folder(str(tmp_path / "rows"), 2_000, 2, seed=0)
    monkeypatch.setenv("PSP_FOLDERS", f"rows={tmp_path / 'rows'}")
    on_page |= {w.label for w in open_data_page(source="folder").selectbox}
    at = open_data_page(source="upload")
    on_page |= {w.label for w in (*at.radio, *at.file_uploader)}
    at.file_uploader(key="upload_file").set_value(("mine.csv", plain_csv(), "text/csv")).run()
    on_page |= {w.label for w in (*at.selectbox, *at.text_input)}
    assert {label for label, page in LABELS.values() if page == "Data"} <= on_page
    controls = (Path(__file__).resolve().parents[1] / "ui" / "controls.py").read_text()
    for label, page in LABELS.values():
        if page == "Pipeline":
            assert label.split(" a, b, c")[0] in controls


def test_presentation_enlarges_the_plotly_text():
    """The Plotly figure's text, ticks and axis titles included (the chart theme sets those itself): 18 px in
    presentation mode, the theme's otherwise."""
    for present, size in ((False, None), (True, 18)):
        at = open_data_page(present=present)
        assert_clean(at)
        (spec,) = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
        sizes = [spec.get("font", {}).get("size")]
        for axis in (spec["xaxis"], spec["yaxis"]):
            sizes += [axis.get("tickfont", {}).get("size"), axis.get("title", {}).get("font", {}).get("size")]
        assert sizes == [size] * 5


def test_the_label_column_is_chosen_never_guessed():
    """A file without a column y: loading says to choose the label column, naming the control; once chosen, it is
    the response, every other column a feature, and the rows keep their budget (the same people)."""
    text = b"outcome,a,b\n" + b"".join(f"{v:.3f},{a:.3f},{b:.3f}\n".encode() for v, a, b in
                                        np.random.default_rng(3).uniform(-1, 1, size=(300, 3)))
    at = open_data_page(source="upload", upload_loss="robust")
    at.file_uploader(key="upload_file").set_value(("plain.csv", text, "text/csv")).run()
    assert not at.exception
    (error,) = at.error
    assert "has no column named 'y'" in error.value and "“Label column” on the Data page" in error.value
    before = Upload.of("plain.csv", text).spec.population()
    at.selectbox(key="response_choice").set_value("outcome").run()
    assert_clean(at)
    assert not at.error and at.session_state["response"] == "outcome"
    assert "response column outcome" in " ".join(c.value for c in at.caption)
    assert "Features: a, b" in " ".join(c.value for c in at.caption)
    with_y = Upload.of("plain.csv", text.replace(b"outcome,", b"y,", 1)).spec.population()
    assert before == with_y  # the same rows, whichever column is named the response


def test_the_domain_follows_the_data():
    """Census data default to the ball of the encoding's public radius, other data to the cube: in a new session's
    link (unless the link names a domain), when the Data page's source changes, and when a PUMS file is uploaded."""
    for query, domain in (({"source": "acs"}, "ball"), ({"source": "acs", "domain": "cube"}, "cube"),
                          ({"source": "synthetic_logistic"}, "cube")):
        at = new_app(60, query)
        at.run()
        assert at.session_state["domain"] == domain, query
    at = open_data_page(domain="ball", radius=2.0)
    at.radio(key="source").set_value("acs").run()
    assert (at.session_state["domain"], at.session_state["radius"]) == ("ball", None)
    at.radio(key="source").set_value("synthetic_logistic").run()
    assert at.session_state["domain"] == "cube"
    at = open_data_page(source="upload")
    at.file_uploader(key="upload_file").set_value(("ca.csv", CA_FILE.read_bytes(), "text/csv")).run()
    assert_clean(at)
    assert at.session_state["domain"] == "ball"
