"""Whether a module image calls device ``printf`` (the CUDA runtime's ``vprintf``)."""
from __future__ import annotations

from ..cudafacts.fatbin_magic import CONTAINER_MAGIC_BYTES
from .container import iter_containers
from .errors import FatbinError

_VPRINTF = b"vprintf"


def image_calls_printf(image: bytes | memoryview) -> bool:
    """True when a module image (fatbin containers, cubin or PTX) may call ``vprintf``: its PTX
    declares or calls it, or a cubin names the symbol. Compressed fatbin entries are decompressed
    to look; an image that cannot be read counts as printing (its output is fetched)."""
    data = bytes(image)
    if _VPRINTF in data:
        return True
    if data[:4] != CONTAINER_MAGIC_BYTES:          # PTX text or a cubin: read above
        return False
    try:
        for fatbin in iter_containers(memoryview(data), "<module image>"):
            if any(_VPRINTF.decode() in text for text in fatbin.ptx_sources()):
                return True
            if any(entry.is_elf and _VPRINTF in bytes(entry.payload) for entry in fatbin.all_entries()):
                return True
    except (FatbinError, ValueError):
        return True
    return False
