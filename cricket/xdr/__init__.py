"""XDR (RFC 4506) encoding: ``Packer``, ``Unpacker`` and the ``XdrError`` hierarchy.

The Cython implementation (``cricket._cext.xdr``, from ``cext/xdr.pyx``) is used when it
is built; ``CRICKET_PUREPYTHON=1`` or a missing build selects the pure-Python twin
(``cricket.xdr._pure``).  Both have the same API and raise the same errors.
"""
from __future__ import annotations

from cricket._select import load
from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError, XdrValueError)

_impl = load("cricket._cext.xdr", "cricket.xdr._pure")

Packer = _impl.Packer
Unpacker = _impl.Unpacker
ZERO_COPY_MIN: int = _impl.ZERO_COPY_MIN
VIEW_MIN: int = _impl.VIEW_MIN
immutable_input = _impl.immutable_input
MAX_LENGTH: int = _impl.MAX_LENGTH
#: "cython" or "pure": which implementation this process uses.
IMPLEMENTATION = "pure" if _impl.__name__.endswith("_pure") else "cython"

__all__ = ["Packer", "Unpacker", "XdrError", "XdrTruncatedError", "XdrLengthError",
           "XdrDiscriminantError", "XdrValueError", "ZERO_COPY_MIN", "VIEW_MIN", "MAX_LENGTH",
           "immutable_input", "IMPLEMENTATION"]
