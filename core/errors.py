"""The errors every surface shows, in one tree under `PspError`. Each message says what is wrong and how to fix it.

- `InputError` (and `DataError`, `BudgetError`, `NoMinimizerError`): the caller's input cannot be used as given;
- `Refused`: a spend the rules do not allow (past a cap or a share, a certification that cannot release, a reader's
  click): nothing is spent;
- `LedgerUnavailable`: the privacy ledger's file cannot be used, so every release is refused;
- `ReleaseFailed`: a charged release ended in an error after its charge, which stays spent and is recorded.


A message that names the control to change writes it as a token `{<setting>}` (e.g. `{loss}`), one of
SETTINGS, and the error records that setting. Each surface names the control in its own words:
`render(name)` fills every token with `name(setting)`; `str(error)` is the command line's wording,
the option `flag(setting)` (e.g. `--loss`), and the app fills in the widget's label (`ui.labels`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

# The settings a message may name: each is an option of the command line and a control of the app.
SETTINGS = ("data", "pums", "loss", "domain", "radius", "split", "state", "year", "acs_root", "census_sample",
            "encoding", "download", "with_replacement", "response_bound", "accounting", "fallback", "response",
            "coordinate", "coverage", "formula", "folder")


def flag(setting: str) -> str:
    """The command line's option for a setting: "with_replacement" is --with-replacement."""
    return "--" + setting.replace("_", "-")


class PspError(Exception):
    """The root: a message that says what is wrong and what to do.

    setting names the control to change (one of SETTINGS), or None when the message names none.

    >>> err = DataError("pass {loss} logistic", setting="loss")
    >>> str(err), err.setting  # the command line's wording names its option
    ('pass --loss logistic', 'loss')
    >>> err.render(lambda setting: f"the {setting.title()} menu")  # another surface names its own control
    'pass the Loss menu logistic'
    >>> isinstance(err, InputError) and isinstance(err, ValueError)
    True
    """

    def __init__(self, message: str, setting: str | None = None) -> None:
        if setting is not None and setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}; add it to core.errors.SETTINGS")
        self.template = message
        self.setting = setting
        super().__init__(self.render(flag))

    def render(self, name: Callable[[str], str]) -> str:
        """The message with every `{<setting>}` token replaced by name(setting).

        Plain replacement, not str.format: the message may quote a file's name or a value with braces.
        """
        text = self.template
        for setting in SETTINGS:
            text = text.replace("{" + setting + "}", name(setting))
        return text

    def __reduce__(self) -> tuple:
        # Worker processes send errors back pickled: keep the template and the setting, not the rendered text.
        return type(self), (self.template, self.setting)


class InputError(PspError, ValueError):
    """The caller's input cannot be used as given."""


class Refused(PspError):
    """A spend the rules do not allow: past a cap or an analyst's share, a certification that cannot release, a
    reader's click. Nothing is spent."""


class LedgerUnavailable(PspError):
    """The privacy ledger's file cannot be used (unreadable, corrupt, unwritable, locked): every release is refused."""


class ReleaseFailed(PspError):
    """A charged release ended in an error after its charge: the entry records the outcome "failed" and its reason;
    what was charged stays spent."""


class DataError(InputError):
    """The data (file, values, labels, design) cannot be used."""


class BudgetError(InputError):
    """A privacy parameter or budget split is out of range."""


class NoMinimizerError(InputError):
    """The empirical risk (1) has no minimizer, or the solver could not reach it."""


MAX_SEED = 2**53 - 1  # every seed, on every surface: the largest integer a number widget (a JS number) holds exactly


def is_integer(x: object) -> bool:
    """An integer, Python's or NumPy's, and not a bool: True is an int to Python, never a count here."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_real(x: object) -> bool:
    """A finite real number (any numbers.Real: Python's, NumPy's, a Fraction) and not a bool; an integer too large
    for a float is not finite here."""
    if not isinstance(x, numbers.Real) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def check_seed(seed: object, what: str) -> None:
    """Raise InputError unless seed is None or an integer from 0 to MAX_SEED (what names it, e.g. "--seed").

    >>> check_seed(7, "the noise seed")
    >>> check_seed(True, "the noise seed")
    Traceback (most recent call last):
    ...
    core.errors.InputError: the noise seed must be an integer from 0 to 9007199254740991 (2^53 - 1), got True
    """
    if seed is None:
        return
    if not is_integer(seed) or not 0 <= seed <= MAX_SEED:
        raise InputError(f"{what} must be an integer from 0 to {MAX_SEED} (2^53 - 1), got {seed!r}")
