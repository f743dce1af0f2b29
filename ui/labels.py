"""The app's words for the names core uses: every setting a core message can name (core.errors.SETTINGS), as a
widget's label and its page, and every quantity of an experiment's CSV (core.teaching.experiments), as an axis title.

A core error names the control to change by its setting; the command line shows it as the option
(`--loss`), and the app, through `message`, as the widget the user can change ("“Loss” on the Data page").
core's messages are lower-case so that they compose into sentences; `capitalised` starts the app's sentences.
"""

from __future__ import annotations

import re

from core.errors import PspError

# setting -> (the widget's label, the page it is on); the labels are those of pages/data.py and ui/controls.py.
LABELS: dict[str, tuple[str, str]] = {
    "data": ("Data file", "Data"),
    "pums": ("Data file", "Data"),
    "loss": ("Loss", "Data"),
    "domain": ("Covariate domain 𝒳", "Pipeline"),
    "radius": ("Ball radius R", "Pipeline"),
    "split": ("Split a, b, c", "Pipeline"),
    "state": ("States", "Data"),
    "year": ("Survey year", "Data"),
    "acs_root": ("Data folder", "Data"),
    "census_sample": ("SYNTHETIC records per state", "Data"),
    "encoding": ("Census encoding", "Data"),
    "download": ("Download missing files", "Data"),
    "with_replacement": ("Draw with replacement", "Data"),
    "response_bound": ("Response bound |y| ≤ B", "Pipeline"),
    "accounting": ("Accounting", "Pipeline"),
    "fallback": ("When the stability test (14) fails", "Pipeline"),
    "response": ("Label column", "Data"),
    "formula": ("Formula", "Data"),
    "folder": ("Folder", "Data"),
    "coordinate": ("Coordinate j", "Pipeline"),
    "coverage": ("The table's intervals", "Pipeline"),
}


def control(setting: str) -> str:
    """The control of a setting in words: its label and its page."""
    label, page = LABELS[setting]
    return f"“{label}” on the {page} page"


def capitalised(text: str) -> str:
    """text as the start of a sentence: a plain first word gets a capital; a file's name (people.csv), a symbol or a
    variable in a formula ("n = 20,000") is left as it is."""
    first = text.split(" ", 1)[0].rstrip(":;,")
    if not (first.isalpha() and first.isascii()) or re.match(r"\w [=<>≤≥∈]", text):
        return text
    return text[:1].upper() + text[1:]


def message(exc: Exception) -> str:
    """An error's message as the app shows it: a sentence (its first letter a capital) that names the page's control
    for any of core's errors (core.errors.PspError), never a command-line option; in a publish-only deployment
    without a server path."""
    from ui.params import locked  # here: ui.params names controls through this module

    said = capitalised(exc.render(control) if isinstance(exc, PspError) else str(exc))
    return without_paths(said) if locked() else said


# An absolute path (POSIX or Windows), but not a web address's "//host/…": no server path reaches a publish-only page.
_PATH = re.compile(r"(?<![\w:/.~-])(?:~|[A-Za-z]:)?[/\\][^\s,;()\"'“”]+")


def without_paths(text: str) -> str:
    """A message with every absolute path in it replaced by words."""
    return _PATH.sub("(a path on this server)", text)


# An experiment's metrics and x variables (core.teaching.experiments.plan), as axis titles: j is the released
# coordinate.
AXIS_TITLES: dict[str, str] = {
    "relative_error": "Relative error |λ̂ − λmin|/λmin",
    "p_zero": "P(λ̂min = 0)",
    "release_rate": "Release rate",
    "abs_error_theta_star": "Error |θ̂ⱼ − θ*ⱼ|",
    "abs_error_fit": "Error |θ̂ⱼ − θⱼ(Pₙ)|",
    "abs_error_population": "Error |θ̂ⱼ − θⱼ(population)|",
    "l2_error_theta_star": "Error ‖θ̂ − θ*‖₂",
    "l2_error_fit": "Error ‖θ̂ − θ(Pₙ)‖₂",
    "n/d": "Rows per dimension n/d",
    "n": "Sample size n",
    "epsilon": "Privacy parameter ε",
}
# The variables an experiment's panel fixes ("d=5", "eps=2", "norm=1"), by their symbols.
PANEL_SYMBOLS = {"d": "d", "eps": "ε", "norm": "‖θ*‖₂"}


def axis_title(name: str) -> str:
    """An experiment's metric or x variable in words; a name the app does not know (an uploaded CSV's) spelled out."""
    return AXIS_TITLES.get(name) or capitalised(name.replace("_", " "))


def panel_title(panel: str) -> str:
    """A panel's name such as "eps=2" as "ε = 2"; any other name as it is."""
    key, equals, value = panel.partition("=")
    return f"{PANEL_SYMBOLS[key]} = {value}" if equals and key in PANEL_SYMBOLS else panel
