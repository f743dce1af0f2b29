"""Which result fields are computed from the data without privacy.

Result dataclasses tag such fields with `field(metadata=NOT_PRIVATE)`; everything else in a
result is either private (a function of the mechanism's output) or public (settings, budget).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

NOT_PRIVATE = {"private": False}


def not_private(result: Any) -> frozenset[str]:
    """Names of the fields of a result dataclass (or its class) that are NOT private."""
    if not is_dataclass(result):
        raise TypeError(f"expected a result dataclass, got {type(result).__name__}")
    return frozenset(f.name for f in fields(result) if f.metadata.get("private") is False)
