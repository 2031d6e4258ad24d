"""XDR (RFC 4506) encoding: ``Packer``, ``Unpacker`` and the ``XdrError`` hierarchy.

The Cython implementation (``cricket._cext.xdr``, from ``cext/xdr.pyx``) is used when it
is built; ``CRICKET_PUREPYTHON=1`` or a missing build selects the pure-Python twin
(``cricket.xdr._pure``).  Both have the same API and raise the same errors.
"""
from __future__ import annotations

from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError, XdrValueError)

# The implementation's names are loaded on first use (PEP 562): the compiled module imports
# ``cricket.xdr.errors``, and loading it here at once made the two an import cycle.
_FROM_IMPL = ("Packer", "Unpacker", "ZERO_COPY_MIN", "VIEW_MIN", "immutable_input", "MAX_LENGTH")


def __getattr__(name: str):
    if name not in _FROM_IMPL and name != "IMPLEMENTATION":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from cricket._select import load
    impl = load("cricket._cext.xdr", "cricket.xdr._pure")
    names = {n: getattr(impl, n) for n in _FROM_IMPL}
    #: "cython" or "pure": which implementation this process uses.
    names["IMPLEMENTATION"] = "pure" if impl.__name__.endswith("_pure") else "cython"
    globals().update(names)
    return names[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_IMPL, "IMPLEMENTATION"})


__all__ = ["Packer", "Unpacker", "XdrError", "XdrTruncatedError", "XdrLengthError",
           "XdrDiscriminantError", "XdrValueError", "ZERO_COPY_MIN", "VIEW_MIN", "MAX_LENGTH",
           "immutable_input", "IMPLEMENTATION"]
