"""Errors raised for bad input. Each message says what is wrong and how to fix it."""


class InputError(ValueError):
    """Base class: the caller's input cannot be used as given."""


class DataError(InputError):
    """The data (file, values, labels, design) cannot be used."""


class BudgetError(InputError):
    """A privacy parameter or budget split is out of range."""


class NoMinimizerError(InputError):
    """The empirical risk (1) has no minimizer, or the solver could not reach it."""
