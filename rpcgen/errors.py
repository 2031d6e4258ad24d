"""rpcgen's errors: every one carries the ``file:line:col`` it is about."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Loc:
    """A position in a source file (1-based line and column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class RpcgenError(Exception):
    """A .x file could not be read, parsed or checked."""

    def __init__(self, loc: Loc | None, message: str) -> None:
        self.loc = loc
        self.message = message
        super().__init__(f"{loc}: {message}" if loc else message)


class PreprocessError(RpcgenError):
    """A cpp directive failed (bad #include, unbalanced #if, cpp itself failed)."""


class ParseError(RpcgenError):
    """The text is not valid XDR/RPC language."""


class CheckError(RpcgenError):
    """The definitions parse but are inconsistent (undefined or duplicate names, bad sizes)."""
