"""The XDR error hierarchy, shared by the Cython codec and its pure-Python twin."""
from __future__ import annotations


class XdrError(ValueError):
    """Data could not be encoded to or decoded from XDR."""


class XdrTruncatedError(XdrError):
    """The input ended before the item being decoded (or a declared length runs past the end)."""


class XdrLengthError(XdrError):
    """A length or count is larger than the declared maximum."""


class XdrDiscriminantError(XdrError):
    """A bool, enum or union discriminant has a value the type does not allow."""


class XdrValueError(XdrError):
    """A Python value cannot be encoded as the requested XDR type (range, type, size)."""


__all__ = ["XdrError", "XdrTruncatedError", "XdrLengthError", "XdrDiscriminantError",
           "XdrValueError"]
