"""One exception hierarchy for everything in :mod:`cricket.fatbin`.

Messages say where (which file, container and entry) and what to do, because
the reader is usually someone whose application just failed to register.
"""
from __future__ import annotations


class FatbinError(Exception):
    """Base class: the device code could not be read, decoded or found."""


class FormatError(FatbinError):
    """A wrapper, container, entry or cubin does not have the layout it must have."""


class TruncatedError(FormatError):
    """A structure claims more bytes than are there."""


class DecompressionError(FatbinError):
    """An entry's payload does not decompress to the size its header promises."""


class CubinError(FormatError):
    """A cubin (CUDA ELF) is malformed or its ``.nv.info`` records cannot be read."""


class PtxError(FormatError):
    """A PTX text cannot be read (not UTF-8/ASCII, or an ``.entry`` signature we cannot lay out)."""


class MemoryAccessError(FatbinError):
    """A wrapper address, or a pointer inside it, does not point at readable memory of this process."""


class NoImageError(FatbinError, LookupError):
    """No cubin or PTX in the fatbin can run on the requested architecture."""


class KernelNotFoundError(FatbinError, LookupError):
    """No image in the fatbin defines a kernel of that name."""

    def __str__(self) -> str:  # LookupError would quote the message like a dict key
        return str(self.args[0]) if self.args else ""
