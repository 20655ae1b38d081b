"""Exceptions that map onto the CLI's exit codes (see README "Exit codes")."""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0  # verified, or nothing to do
EXIT_REJECTED = 1  # not equivalent: a counterexample was found
EXIT_INPUT = 2  # usage or input error
EXIT_UNVERIFIED = 3  # could not verify: toolchain or device missing
# The one map from a result's status (a verdict's, a port's) to the exit code.
EXIT_OF_STATUS = {"verified": EXIT_OK, "nothing to verify": EXIT_OK, "rejected": EXIT_REJECTED,
                  "failed": EXIT_REJECTED, "unverified": EXIT_UNVERIFIED}


@dataclass
class Located:
    """One `file:line:col: severity: message` line."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"
    code: str | None = None

    def format(self) -> str:
        tag = f" [{self.code}]" if self.code else ""
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}{tag}"


class XlateError(Exception):
    exit_code = EXIT_INPUT


class InputError(XlateError):
    """The input cannot be used: missing, unreadable, binary, empty, or malformed."""

    def __init__(self, message: str, locations: list[Located] | None = None):
        super().__init__(message)
        self.message = message
        self.locations = locations or []

    def lines(self) -> list[str]:
        return [loc.format() for loc in self.locations] or [self.message]


class SpecError(InputError):
    """A kernel's spec cannot be inferred or its annotation is malformed."""


class ToolchainMissing(XlateError):
    """A compiler, runtime or device needed for this step is not available here."""

    exit_code = EXIT_UNVERIFIED

    def __init__(self, message: str, remedy: str | None = None):
        super().__init__(message)
        self.message = message
        self.remedy = remedy
