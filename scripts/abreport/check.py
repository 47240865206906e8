"""Field checks shared by the loaders: each failure is an `InputError` naming file and field."""
from __future__ import annotations

import math
from typing import Any, Optional

from .errors import InputError


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _describe(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, str):
        return f'"{v[:40]}"'
    if isinstance(v, (list, dict)):
        return "an array" if isinstance(v, list) else "an object"
    return repr(v)


class _Checker:
    """Validates fields of one object at `where` (e.g. "benchmarks[3]") in `file`."""

    def __init__(self, file: str, where: str, obj: dict) -> None:
        self.file, self.where, self.obj = file, where, obj

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(self.file, self._path(key), problem)

    def string(self, key: str, required: bool = True) -> Optional[str]:
        if key not in self.obj:
            if required:
                raise self.fail(key, "missing")
            return None
        v = self.obj[key]
        if not isinstance(v, str) or not v:
            raise self.fail(key, f"expected a non-empty string, got {_describe(v)}")
        return v

    def number(self, key: str, required: bool = True, positive: bool = False,
               nonneg: bool = False, nullable: bool = False) -> Optional[float]:
        if key not in self.obj:
            if required:
                raise self.fail(key, "missing")
            return None
        v = self.obj[key]
        if v is None and nullable:
            return None
        if not _is_number(v):
            raise self.fail(key, f"expected a number, got {_describe(v)}")
        try:
            f = float(v)
        except OverflowError:  # a JSON integer beyond the float range
            raise self.fail(key, f"expected a finite number, got an integer of {v.bit_length()} bits") from None
        if not math.isfinite(f):
            raise self.fail(key, f"expected a finite number, got {v}")
        if positive and f <= 0:
            raise self.fail(key, f"expected a positive number, got {v}")
        if nonneg and f < 0:
            raise self.fail(key, f"expected a non-negative number, got {v}")
        return f

    def integer(self, key: str) -> int:
        v = self.number(key, positive=True)
        assert v is not None
        if v != int(v):
            raise self.fail(key, f"expected a positive integer, got {v}")
        return int(v)

    def boolean(self, key: str, required: bool = False) -> Optional[bool]:
        if key not in self.obj or self.obj[key] is None:
            if required:
                raise self.fail(key, "missing" if key not in self.obj else "expected true or false, got null")
            return None
        v = self.obj[key]
        if not isinstance(v, bool):
            raise self.fail(key, f"expected true or false, got {_describe(v)}")
        return v

    def text(self, key: str) -> str:
        """A required string that may be empty (a one-line description)."""
        if key not in self.obj:
            raise self.fail(key, "missing")
        v = self.obj[key]
        if not isinstance(v, str):
            raise self.fail(key, f"expected a string, got {_describe(v)}")
        return v

    def array(self, key: str) -> list:
        if key not in self.obj:
            raise self.fail(key, "missing")
        v = self.obj[key]
        if not isinstance(v, list):
            raise self.fail(key, f"expected an array, got {_describe(v)}")
        return v

    def strings(self, key: str) -> tuple[str, ...]:
        """A required array of non-empty strings."""
        out = []
        for i, v in enumerate(self.array(key)):
            if not isinstance(v, str) or not v:
                raise self.fail(f"{key}[{i}]", f"expected a non-empty string, got {_describe(v)}")
            out.append(v)
        return tuple(out)

    def obj_at(self, key: str) -> dict:
        """A required nested object."""
        if key not in self.obj:
            raise self.fail(key, "missing")
        v = self.obj[key]
        if not isinstance(v, dict):
            raise self.fail(key, f"expected an object, got {_describe(v)}")
        return v
