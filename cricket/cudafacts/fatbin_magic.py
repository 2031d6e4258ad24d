"""The magic numbers that mark device code in memory and in files, and the largest size the
client believes a header of one, stated once.

``cricket.fatbin`` reads the structures they open; the client checks them before it takes a pointer
for a fatbin or an image for a cubin, without importing the fatbin readers (whose import pulls in
the decompressors). Values from ``shared/docs/fatbin-format.md`` (CUDA 13.0's ``fatbinary_section.h``
and ``fatbinary.h``); all little-endian.
"""
from __future__ import annotations

WRAPPER_MAGIC = 0x466243B1          # FATBINC_MAGIC: the __fatBinC_Wrapper_t __cudaRegisterFatBinary gets
CONTAINER_MAGIC = 0xBA55ED50        # a fatbin container (fatBinaryHeader)
CONTAINER_MAGIC_BYTES = CONTAINER_MAGIC.to_bytes(4, "little")
ELF_MAGIC = b"\x7fELF"              # a cubin on its own is an ELF file
# The most bytes one fatbin container or image found in the program's memory may claim (its header
# says how long it is): a header that says more is taken as corrupt, not read.
MAX_IN_MEMORY = 1 << 32
