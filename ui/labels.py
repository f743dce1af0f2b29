"""The app's name for every setting a core message can name (core.errors.SETTINGS): a widget's label and its page.

A core error names the control to change by its setting; the command line shows it as the option
(`--loss`), and the app, through `message`, as the widget the user can change ("“Loss” on the Data page").
core's messages are lower-case so that they compose into sentences; `capitalised` starts the app's sentences.
"""

from __future__ import annotations

import re

from core.errors import InputError

# setting -> (the widget's label, the page it is on); the labels are those of pages/data.py and ui/controls.py.
LABELS: dict[str, tuple[str, str]] = {
    "data": ("CSV file", "Data"),
    "pums": ("CSV file", "Data"),
    "loss": ("Loss", "Data"),
    "domain": ("Covariate domain 𝒳", "Pipeline"),
    "radius": ("Ball radius R", "Pipeline"),
    "split": ("Split a, b, c", "Pipeline"),
    "state": ("States", "Data"),
    "download": ("Download missing files", "Data"),
    "with_replacement": ("Draw with replacement", "Data"),
    "response_bound": ("Response bound |y| ≤ B", "Pipeline"),
    "accounting": ("Accounting", "Pipeline"),
    "fallback": ("When the stability test (14) fails", "Pipeline"),
    "response": ("Label column", "Data"),
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
    for an InputError, never a command-line option."""
    return capitalised(exc.render(control) if isinstance(exc, InputError) else str(exc))
