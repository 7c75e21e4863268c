"""The rows a batch calls its tool over, as argument dicts with their labels, made in the caller's
thread before any request goes out.

`rows` is an iterable of dicts (a list, a generator) or a pandas DataFrame, whose rows become dicts
of column name -> argument under the frame's own index labels. A missing value (None, NaN, pandas'
NA and NaT) is left out of the arguments, so a tool's default applies where a cell is empty; numpy
scalars become Python numbers. `arguments(row) -> dict` maps each row first (it gets the row as a
dict, missing values left out, or the item itself for a row that is not a mapping). pandas is
imported only when the rows are a DataFrame, and then only by the DataFrame itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...base.errors import UsageError

ArgumentsOf = Callable[[Any], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Rows:
    """The arguments of each row, in order, and each row's label (a DataFrame's index, else 0..n-1)."""

    arguments: list[dict[str, Any]]
    labels: list[Hashable]
    index_name: Hashable = None


def rows_of(rows: Any, arguments: ArgumentsOf | None = None) -> Rows:
    """`rows` as argument dicts; a UsageError names the first row that is not one."""
    if _is_dataframe(rows):
        items: Iterable[Any] = (_present(record) for record in rows.to_dict(orient="records"))
        labels, index_name = list(rows.index), rows.index.name
    elif isinstance(rows, (Mapping, str, bytes)) or not isinstance(rows, Iterable):
        raise UsageError(f"rows must be an iterable of dicts of arguments or a pandas DataFrame, not {type(rows).__name__}")
    else:
        items, labels, index_name = rows, [], None
    made: list[dict[str, Any]] = []
    for number, item in enumerate(items):
        made.append(_arguments_of(number, item, arguments))
    return Rows(made, labels or list(range(len(made))), index_name)


def _arguments_of(number: int, item: Any, arguments: ArgumentsOf | None) -> dict[str, Any]:
    row = _present(item) if isinstance(item, Mapping) else item
    if arguments is not None:
        try:
            row = arguments(row)
        except Exception as exc:  # the user's function: named with the row it failed on
            raise UsageError(f"arguments(row {number}) raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(row, Mapping):
        given = "arguments() returned" if arguments is not None else "is"
        raise UsageError(f"row {number} {given} {type(row).__name__}, not a dict of arguments")
    return {str(key): value for key, value in row.items()}


def _present(record: Mapping[Any, Any]) -> dict[Any, Any]:
    """A row's values that are there, as Python values: missing ones left out, numpy scalars unboxed."""
    natives = {key: _native(value) for key, value in record.items()}
    return {key: value for key, value in natives.items() if not _missing(value)}


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    kind = type(value)
    return kind.__module__.startswith("pandas") and kind.__name__ in ("NAType", "NaTType")


def _native(value: Any) -> Any:
    """A numpy scalar as the Python number it holds (JSON knows no numpy); anything else as it is."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _is_dataframe(rows: Any) -> bool:
    kind = type(rows)
    return kind.__name__ == "DataFrame" and kind.__module__.startswith("pandas") and hasattr(rows, "to_dict")
