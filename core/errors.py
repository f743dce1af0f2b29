"""Errors raised for bad input. Each message says what is wrong and how to fix it."""

import numbers


class InputError(ValueError):
    """Base class: the caller's input cannot be used as given."""


class DataError(InputError):
    """The data (file, values, labels, design) cannot be used."""


class BudgetError(InputError):
    """A privacy parameter or budget split is out of range."""


class NoMinimizerError(InputError):
    """The empirical risk (1) has no minimizer, or the solver could not reach it."""


MAX_SEED = 2**63 - 1  # seeds are taken as non-negative 64-bit integers everywhere


def check_seed(seed: object, what: str) -> None:
    """Raise InputError unless seed is None or an integer from 0 to MAX_SEED (what names it, e.g. "--seed")."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise InputError(f"{what} must be an integer from 0 to 2^63 - 1, got {seed!r}")
