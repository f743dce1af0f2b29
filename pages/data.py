"""Data page: choose the data set, load it and look at it.

Everything shown below the controls is computed from the raw data without privacy: the page is
for the data's owner, and nothing on it may be published.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data import Dataset
from core.data.encoding import CENTRED_INTERCEPT, ENCODINGS, RADII
from core.data.folder import FolderData, SourceData
from core.data.formats import UPLOAD_TYPES, header
from core.data.spec import SAMPLE_ROWS, SYNTHETIC_CENSUS, SyntheticCensusSpec
from core.errors import DataError, PspError
from core.estimator.problem import default_coordinate
from core.mechanisms.pipeline import Problem
from core.teaching.diagnosis import fit_diagnosis, projection
from ui import keys, loaded, params, session
from ui.boot import through_navigation
from ui.charts import chart
from ui.figures import histogram
from ui.format import data_table, md, metric_row, percent, tagged
from ui.labels import LABELS, message
from ui.theme import NOT_PRIVATE

through_navigation()  # a deep link's first run on a fresh server goes through app.py

PREVIEW_ROWS = 20
QUANTILES = {"min": 0.0, "5%": 0.05, "25%": 0.25, "median": 0.5, "75%": 0.75, "95%": 0.95, "max": 1.0}


# ---------------------------------------------------------------- controls


def limits(key: str) -> dict:
    """A number widget's range: the range its link accepts (ui.params.PARAMS), so a valid link is never rewritten."""
    low, high = params.PARAMS[key].bounds
    return dict(min_value=low, max_value=high)


def store_upload() -> None:
    """Keep the chosen file in the session: the uploader itself forgets it on other pages."""
    file = st.session_state["upload_file"]
    if file is None:
        keys.UPLOAD.pop()
        return
    keys.UPLOAD.set(loaded.Upload.of(file.name, file.getvalue()))
    loaded.follow_the_data()


def store_codebook() -> None:
    """Keep the chosen codebook in the session (read with the data, where a malformed one is told in one sentence)."""
    file = st.session_state["codebook_file"]
    if file is None:
        keys.CODEBOOK.pop()
    else:
        keys.CODEBOOK.set((file.name, file.getvalue()))


def pick_response() -> None:
    """The label column chosen in its widget becomes the setting (the registry's "response")."""
    if st.session_state.get("response_choice") is not None:
        st.session_state["response"] = st.session_state["response_choice"]


def resample() -> None:
    st.session_state["sample_seed"] += 1


def seed_controls(seed_col: DeltaGenerator, button_col: DeltaGenerator, help_text: str) -> None:
    seed_col.number_input("Sample seed", step=1, key="sample_seed", help=help_text, **limits("sample_seed"))
    button_col.button("Resample", on_click=resample, key="resample", help="Draw a new sample: the next sample seed")


def synthetic_controls(robust: bool) -> None:
    cols = st.columns(4)
    cols[0].number_input("n", step=10_000, key="n", **limits("n"),
                         help="Sample size n: the rows of the empirical distribution Pₙ (n·d at most 2·10⁸)")
    cols[1].number_input("d", step=1, key="d", **limits("d"),
                         help="Dimension d of θ; covariates x ~ Uni[−1, 1]ᵈ (section 4.1)")
    cols[2].number_input("‖θ*‖₂", step=0.5, format="%g", key="theta_norm", **limits("theta_norm"),
                         help="Norm of the generating parameter θ*; its direction is drawn from the sample seed")
    if robust:
        cols[3].number_input("Noise scale", step=0.5, format="%g", key="noise_scale", **limits("noise_scale"),
                             help="Scale b of the Laplace noise in y = ⟨x, θ*⟩ + Lap(b)")
    seed_col, button_col, _ = st.columns([1, 1, 2], vertical_alignment="bottom")
    seed_controls(seed_col, button_col, "Seed of the generator: θ*'s direction, the covariates and the responses")


def acs_controls() -> None:
    from core.data.acs import default_root  # folktables loads only for census data

    cols = st.columns(3)
    cols[0].text_input("States", key="states",
                       help="Two-letter state codes separated by commas, e.g. CA, MI; their filtered records "
                       "are the population")
    cols[1].number_input("Survey year", step=1, key="year", **limits("year"),
                         help="ACS survey year of the person files (2014 or later)")
    cols[2].radio("Horizon", ("1-Year", "5-Year"), key="horizon", horizontal=True,
                  help="1-Year or 5-Year person files")
    sample = params.get("census_sample") is not None  # a SYNTHETIC sample is read from its own folder, never this one
    if params.locked():  # a server folder is the curator's to choose (core.data.acs.default_root), and never shown
        st.caption("Census files are read from the census folder this deployment's curator set.")
    else:
        st.text_input("Data folder", key="acs_root", placeholder=str(default_root()), disabled=sample,
                      help="Folder laid out as folktables does, <folder>/<year>/<horizon>/psam_p<FIPS>.csv; "
                      "empty means the default shown")
    n_col, seed_col, button_col, _ = st.columns(4, vertical_alignment="bottom")
    # value=None lets the field be emptied: empty means the whole population.
    n_col.number_input("Sample size n", step=10_000, key="acs_n", value=None, **limits("acs_n"),
                       placeholder="whole population",
                       help="Draw n people without replacement from the filtered population (each person fills at "
                       "most one row); empty uses every record")
    seed_controls(seed_col, button_col, "Seed of the sample (unused for the whole population)")
    st.checkbox("Draw with replacement", key="with_replacement",
                help="Simulate draws from the population as the paper's experiments do; n may then exceed the "
                "population, one person may fill several rows, and the guarantee per person holds only by group "
                "privacy (the Report states it)")
    refused = loaded.write_refusal()
    st.checkbox("Download missing files", key="download", disabled=sample or refused is not None,
                help=refused or "Fetch missing person files from the Census Bureau (www2.census.gov), with a "
                "progress bar")
    where = "" if params.locked() else "the path it is expected at and "  # a publish-only page names no server path
    st.caption("A download shows its megabytes as they arrive. The census site is not always reachable: a missing "
               f"file is then reported within 10 s, with {where}the address it is published at, so it can be fetched "
               "by hand.")
    encoding_control()
    census_sample_controls()


ENCODING_OPTIONS = {"centred": f"centred (‖x‖₂ ≤ {RADII['centred']:g})",
                    "paper": f"the paper's (‖x‖₂ ≤ {RADII['paper']:g})"}


def encoding_control() -> None:
    """The census encoding (core.data.encoding): with λ_reg = 0, every coefficient but the intercept is the same
    under both."""
    st.radio(LABELS["encoding"][0], ENCODINGS, key="encoding", horizontal=True, format_func=ENCODING_OPTIONS.get,
             help="centred: each 0/1 indicator less a public constant (½ for a lone one, 1/k for a group of k), so "
             f"every row lies in a smaller ball (radius {RADII['centred']:g} instead of 3) and every release needs "
             "less noise for the same ε. With λ_reg = 0 (the default) every coefficient but the intercept is the "
             "paper's (a ridge shrinks the intercept too, and then every coefficient moves); the intercept becomes "
             f"the log-odds at the encoding's centre ({CENTRED_INTERCEPT}). the paper's: indicators in {{0, 1}} "
             "(section 4.2), radius 3.")


def census_sample_controls() -> None:
    """A SYNTHETIC census sample in one click where a chosen state's census file is missing; while one is read, that
    it is SYNTHETIC, and the way back to the census files."""
    rows = params.get("census_sample")
    missing = missing_census_files() if rows is None else []
    if rows is None and not missing:
        return
    with st.container(border=True):
        if rows is None:
            st.markdown(f"**No census file for {', '.join(missing)} in this folder.** Without one (offline, or while "
                        "the census site does not answer), try the census path on a **SYNTHETIC census sample**: "
                        "made-up records in the census layout, no real person. It is kept in a folder of its own, "
                        "apart from census files, and every description, report and ledger entry made from it says "
                        "SYNTHETIC.")
        else:
            sample_in_use(rows)
        rows_col, make_col, back_col = st.columns(3, vertical_alignment="bottom")
        chosen = rows_col.number_input(LABELS["census_sample"][0], value=rows or SAMPLE_ROWS, step=10_000,
                                       key="census_sample_rows", help=SAMPLE_HELP, **limits("census_sample"))
        if rows is not None:
            back_col.button("Use the census files instead", key="use_census_files", on_click=use_census_files,
                            icon=":material/undo:")
        refused = loaded.write_refusal()
        if make_col.button("Make a SYNTHETIC census sample", key="make_census_sample", icon=":material/science:",
                           disabled=refused is not None, help=refused or "Made once and kept: later clicks and "
                           "sessions read it"):
            make_and_read(chosen)  # a reader's button is off: loading these settings says why, once


def missing_census_files() -> list[str]:
    """The chosen states whose census file is not in the data folder ([] when the settings name no state, year or
    horizon the census has: loading says why)."""
    try:
        return loaded.missing_files(loaded.data_spec())
    except PspError:
        return []


SAMPLE_HELP = ("Made-up person records per state, in the layout of the census person files, drawn by a seeded "
               f"generator: no census record and no real person. {SAMPLE_ROWS:,} take a few seconds to make; a "
               "state's full census size (about 380,000 for California) about a minute.")


def use_census_files() -> None:
    st.session_state["census_sample"] = None


def sample_in_use(rows: int) -> None:
    from core.data.census_sample import folder  # the generator loads only for a SYNTHETIC sample

    kept = "a folder of its own" if params.locked() else md(str(folder(rows)))  # a publish-only page names no path
    st.info(f"**{SYNTHETIC_CENSUS}.** The census source reads a SYNTHETIC sample, not census files: {rows:,} made-up "
            f"records per state in the census layout, kept in {kept}. Everything made from it says SYNTHETIC, and the "
            "privacy ledger keeps its charges apart from the real people of these states.", icon=":material/science:")


def make_and_read(rows: int) -> None:
    """Write the SYNTHETIC sample's missing files under a progress bar (none when every file is there: it is read
    again), then read it: the setting census_sample, and a new run, so the sidebar and the page load it. A sample that
    cannot be made is one message naming the control to change."""
    bar = loaded.ProgressBar()
    start = time.perf_counter()
    try:
        spec = SyntheticCensusSpec(params.get("states"), params.get("year"), params.get("horizon"), rows)
        loaded.check_writes(spec)  # the rule of who may write, asked again at the click
        loaded.make_sample(spec, bar)
    except (PspError, OSError) as exc:
        st.error(message(exc))
        return
    st.session_state["census_sample"] = rows
    what = loaded.sample_words(spec)
    st.toast(f"Made {what} in {time.perf_counter() - start:.1f} s" if bar.drawn else f"Reading {what}, made before",
             icon=":material/science:")
    st.rerun()


FOLDER_ROWS = ("A curator's folder stays in its files: each pass of the fit and of the private stages reads it a "
               "block of rows at a time, so its rows are not previewed and its columns not drawn here. Whose budget "
               "a release spends is every row of the folder, by its content, however its files are cut.")
IDENTITY = ("How the privacy ledger knows an upload: a census person file by the persons it holds (its state and "
            "survey, as the census folder's), any other file by its rows — renaming or reordering its columns, "
            "reordering its rows, coding its labels another way, rescaling a column, saving it again or converting "
            "it to another format keeps the budget it has spent.")


def census_folder_hint() -> str:
    """One sentence pointing census person files to the census-folder source (the upload limit is the server's)."""
    limit = st.get_option("server.maxUploadSize")
    return (f"A state's census person file can exceed the {limit} MB upload limit: put it in a census folder and "
            f"load it with the source “{params.SOURCES['acs']}”, which reads the folder's files where they lie.")


def loss_control() -> None:
    st.radio(LABELS["loss"][0], (params.AUTO_LOSS, "robust", "logistic"), key="upload_loss", horizontal=True,
             format_func=lambda v: "from the label" if v == params.AUTO_LOSS else v,
             help="From the label: logistic when the label takes two values, else robust (said below the "
             "data). robust: y is a real response, loss φ(y − ⟨x, θ⟩) with φ(s) = log(1 + eˢ) + log(1 + e⁻ˢ); "
             "logistic: y is a binary label (0/1, −1/+1 or true/false). An ACS PUMS person file is always "
             "logistic.")


def upload_controls() -> None:
    upload = keys.UPLOAD.get()
    if upload is None or not upload.is_pums:  # a census file fixes the loss: logistic, on the income classes ±1
        loss_control()  # chosen before the file is loaded, so the first fit of the upload already uses it
    st.file_uploader(
        LABELS["data"][0], type=list(UPLOAD_TYPES), key="upload_file", on_change=store_upload,
        help="An ACS PUMS person file (a CSV whose header names PINCP; encoded as the ACS income problem) or any "
        "file of rows — CSV with a header, Parquet, Stata (.dta), SPSS (.sav), SAS (.sas7bdat) or SAS XPORT (.xpt) — "
        "with a column y (label or response) and numeric features. " + census_folder_hint(),
    )
    st.caption(IDENTITY)
    if upload is None:
        st.caption(census_folder_hint())  # a file past the limit never reaches the page: say so before it is chosen
        return
    if upload.is_pums:
        st.caption(f"**{md(upload.name)}** · ACS PUMS person file: ACSIncome's filter, 17 features, logistic loss. "
                   + census_folder_hint())
        encoding_control()
        return
    try:
        columns = header(upload.content, upload.name)
    except DataError:  # an unreadable file: loading it says why
        columns = []
    if columns:  # never guessed: y when the file has it, else the user's choice (until then, loading says so)
        current = params.get("response")
        st.selectbox(LABELS["response"][0], columns, index=columns.index(current) if current in columns else None,
                     placeholder="Choose the label column", key="response_choice", on_change=pick_response,
                     help="The column to model (a label for the logistic loss, a response for the robust one); "
                     "every other column is a feature. Which column it is does not change whose budget it spends.")
    formula_controls()
    (loss, notice), response = loaded.loss_and_notice(), params.get("response")
    formula = params.get("formula").strip()
    model = f"the model {md(formula)}" if formula else f"response column {md(response)}"
    st.caption(f"**{md(upload.name)}** · {upload.spec.format}, {model}, {loss} loss"
               + ("" if notice is None else f" ({md(notice)})"))


def formula_controls() -> None:
    """A model as statisticians state it (core.data.formula): a formula, and the codebook of public ranges and levels
    its variables are encoded and scaled by."""
    st.text_input(LABELS["formula"][0], key="formula", placeholder="y ~ age + C(region) + hours",
                  help="Optional. The label left of ~; numeric variables are scaled to [−1, 1] by their public range "
                  "in the codebook, C(v) is coded against its first listed level, and an Intercept is added unless "
                  "the formula says - 1. Without a formula every column but the label is a feature, as written.")
    if params.get("formula").strip():
        st.file_uploader("Codebook (CSV)", type=["csv"], key="codebook_file", on_change=store_codebook,
                         help="One row per variable, columns variable,type,low,high,levels: numeric with its public "
                         "range low..high, or categorical with its levels a|b|c. Public facts only: never the data's "
                         "own minimum and maximum.")
        book = keys.CODEBOOK.get()
        if book is not None:
            st.caption(f"Codebook: **{md(book[0])}**")


def folder_controls() -> None:
    """A curator's folder by the name the deployment gives it, its label column and the loss: its rows stay in its
    files, read a block at a time by every pass."""
    names = list(params.deployment_folders())
    if not params.get("folder") and names:
        st.session_state["folder"] = names[0]
    st.selectbox(LABELS["folder"][0], names, key="folder", on_change=loaded.follow_the_data,
                 help="The data sets this server's curator offers, by name. Each is a folder of Parquet or CSV files, "
                 "read a block of rows at a time, so its size is bounded by the disk, not the memory.")
    loss_control()
    try:
        columns = loaded.folder_columns()
    except PspError:  # an unreadable folder: loading it says why
        columns = []
    if columns:
        current = params.get("response")
        st.selectbox(LABELS["response"][0], columns, index=columns.index(current) if current in columns else None,
                     placeholder="Choose the label column", key="response_choice", on_change=pick_response,
                     help="The column to model; every other column is a feature. Whose budget a release spends "
                     "is every row of the folder, whichever column is modelled.")


def source_controls() -> None:
    st.radio("Source", params.sources(), key="source", format_func=params.SOURCES.get, horizontal=True,
             on_change=loaded.follow_the_data,
             help="Synthetic data need no files or network; ACS income reads census person files; "
             "an upload reads your own CSV; a curator's folder, a data set larger than memory")
    source = params.get("source")
    if source.startswith("synthetic"):
        synthetic_controls(source == "synthetic_robust")
    elif source == "acs":
        acs_controls()
    elif source == "folder":
        folder_controls()
    else:
        upload_controls()


# ---------------------------------------------------------------- loading


def load() -> tuple[SourceData | None, Problem | None, str | None]:
    """The data, the fitted problem and the library's message for whatever failed, with progress."""
    with st.status("Loading the data and fitting θ(Pₙ)…", expanded=False) as status:
        try:
            data = loaded.dataset()
        except (PspError, OSError) as exc:
            status.update(label="The data could not be loaded", state="error")
            return None, None, message(exc)
        try:
            problem = loaded.problem()
        except PspError as exc:
            status.update(label="The model could not be fitted to these data", state="error")
            return data, None, message(exc)
        status.update(label=f"Loaded {data.n:,} rows · {data.source}", state="complete")
    return data, problem, None


# ---------------------------------------------------------------- summary


def projected(problem: Problem | None, n: int) -> tuple[str, str, str]:
    if problem is None:
        return "Rows projected onto the domain", "—", "Rows outside the domain are projected onto it before the fit"
    model = problem.model
    where = "the cube [−1, 1]ᵈ" if model.domain == "cube" else f"the ball ‖x‖₂ ≤ {model.radius:g}"
    value = f"{problem.clipped_rows:,} ({percent(problem.clipped_rows / n)})"
    return "Rows projected onto the domain", value, f"Rows outside {where} are projected onto it before the fit"


def projection_notes(data: Dataset, problem: Problem | None) -> None:
    """The share of rows projected onto the domain, what to do when most were, and a fit without a minimiser.

    Counted on the raw rows, not private: for the data's owner, never for the Report.
    """
    if problem is None or (problem.clipped_rows == 0 and problem.fit.has_minimiser):
        return
    where = projection(data.X, problem)
    singular = "the fit θ(Pₙ) has no certified minimiser, so the private stages take λmin = 0 and the test (14) fails"
    if where.collapsed:  # one note: the projection, what to do, and the singular design it caused
        ranks = "the raw columns have full rank, the projected ones do not"
        cause = f"Projection also made the design rank-deficient ({ranks})" if where.mostly else ranks.capitalize()
        st.warning(tagged(md(f"{where.sentence}. {where.advice} {cause}: {singular}; rescale rather than drop "
                             "columns.")))
        return
    if where.rows:
        note = tagged(md(f"{where.sentence}. {where.advice}".strip()))
        (st.warning if where.advice else st.info)(note)
    if not problem.fit.has_minimiser:
        st.warning(tagged(md(f"No certified minimiser: {fit_diagnosis(problem, where)}; {singular}.")))


def response_table(y: np.ndarray) -> pd.DataFrame:
    stats = {"mean": y.mean(), "sd": y.std(ddof=1)} | {k: np.quantile(y, q) for k, q in QUANTILES.items()}
    return pd.DataFrame([stats], index=["y"])


def summary(data: SourceData, problem: Problem | None) -> None:
    st.markdown(tagged("#### Summary"))
    items = [("n", f"{data.n:,}", "Rows of the data set"), ("d", str(data.d), "Feature columns")]
    if isinstance(data, FolderData):  # nothing here may read every row again: the fit's pass counted these
        metric_row([*items, projected(problem, data.n)])
        st.caption("Features: " + ", ".join(data.feature_names))
        st.info(FOLDER_ROWS, icon=":material/folder:")
        return
    if loaded.loss_name() == "logistic":
        items.append(("Share of y = +1", percent(float(np.mean(data.y == 1))),
                      "Label balance: the share of positive labels"))
    items.append(projected(problem, data.n))
    metric_row(items)
    projection_notes(data, problem)
    st.caption("Features: " + ", ".join(data.feature_names))
    if loaded.loss_name() == "robust":
        data_table(response_table(data.y), width="content")


def preview(data: Dataset) -> None:
    st.markdown(tagged(f"#### First {PREVIEW_ROWS} rows"))
    frame = pd.DataFrame(data.X[:PREVIEW_ROWS], columns=list(data.feature_names))
    frame["y"] = data.y[:PREVIEW_ROWS]
    data_table(frame, hide_index=True, height="content")


def histograms(data: Dataset) -> None:
    st.markdown(tagged("#### Distributions"))
    first = default_coordinate(data.feature_names)  # not the intercept: a constant has no distribution to see
    columns = (*data.feature_names[first:], *data.feature_names[:first], "y")
    name = st.selectbox("Column", columns, key="data_histogram",
                        help="The column whose distribution is shown; dashed lines mark the cube's edges")
    values = data.y if name == "y" else data.X[:, data.feature_names.index(name)]
    edges = name != "y" and params.get("domain") == "cube"
    chart(histogram(values, name, edges), "data_histogram_chart", restyle=False)


# ---------------------------------------------------------------- page


def main() -> None:
    session.ensure()  # a direct link can run this page before app.py has run
    st.title("Data")
    st.caption(f"{NOT_PRIVATE} This page is for the data's owner: it shows the raw data and statistics computed "
               "from it without privacy. Nothing here may be published; the Report page holds what can be.")
    with st.container(border=True):
        source_controls()
    if params.get("source") == "upload" and keys.UPLOAD.get() is None:
        st.info("Choose a CSV file to load it.")
        return
    data, problem, error = load()
    if error is not None:
        st.error(error)
    if params.locked():  # publish-only deployment: no raw rows and no statistics computed without privacy
        st.info("This deployment is locked to publish mode: the data's rows and statistics are not shown. "
                f"Loaded: {loaded.data_spec().describe()}.", icon=":material/lock:")
        return
    if data is not None:
        summary(data, problem)
        if isinstance(data, Dataset):
            preview(data)
            histograms(data)


main()
