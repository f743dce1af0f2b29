"""Which result fields are computed from the data without privacy.

Result dataclasses tag such fields with `field(metadata=NOT_PRIVATE)`; everything else in a
result is either private (a function of the mechanism's output) or public (settings, budget).
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

NOT_PRIVATE = {"private": False}


def not_private(result: Any) -> frozenset[str]:
    """Names of the fields of a result dataclass (or its class) that are NOT private; none for a PublicView."""
    if isinstance(result, PublicView):
        return frozenset()
    if not is_dataclass(result):
        raise TypeError(f"expected a result dataclass, got {type(result).__name__}")
    return frozenset(f.name for f in fields(result) if f.metadata.get("private") is False)


class PublicView:
    """What a result may show where only private outputs may be shown (publish mode, the Report): its fields that
    no NOT_PRIVATE mark names, nested results as views too, and the properties its class lists in PUBLIC_PROPERTIES.
    Reading anything else raises AttributeError, so a page that reaches for a non-private number fails instead of
    showing it."""

    __slots__ = ("_kind", "_values")

    def __init__(self, result: Any) -> None:
        hidden = not_private(result)
        values = {f.name: _public(getattr(result, f.name)) for f in fields(result) if f.name not in hidden}
        values |= {name: getattr(result, name) for name in getattr(type(result), "PUBLIC_PROPERTIES", ())}
        object.__setattr__(self, "_kind", type(result).__name__)
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{name} of a {self._kind} is not part of its public view (it is not private, or not "
                                 "a field)") from None

    def values(self) -> dict[str, Any]:
        """Every entry of the view by name (nested views as they are)."""
        return dict(self._values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a public view is read only")

    def __repr__(self) -> str:
        return f"PublicView({self._kind}: {', '.join(self._values)})"


def _public(value: Any) -> Any:
    return PublicView(value) if is_dataclass(value) and not isinstance(value, type) else value


def public(result: Any) -> PublicView:
    """The public view of a result dataclass (PublicView)."""
    return PublicView(result)
