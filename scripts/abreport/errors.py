"""The one error type of attnbench_report: bad input, reported as one line.

The entry point catches `InputError`, prints
`attnbench_report: error: <file>: <field>: <problem>` and exits with status 2.
"""
from __future__ import annotations


class InputError(Exception):
    """An unreadable or malformed input file (or an unusable argument)."""

    def __init__(self, file: str, field: str, problem: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        super().__init__(self.line())

    def line(self) -> str:
        parts = [p for p in (self.file, self.field, self.problem) if p]
        # Always one line, whatever the parts held.
        return " ".join(": ".join(parts).split())
