"""``CUDA_VISIBLE_DEVICES`` read as NVIDIA's driver reads it, applied to the server's device list.

The connection applies it once to the HELLO snapshot (:class:`cricket.client.api.Connection`), so
the libcudart shim, the libcuda.so.1 replacement and the Python API all see the same devices, in
the same order; each keeps the server's ordinal in ``Device.ordinal`` for the calls that name a
device. Rules (CUDA C++ Programming Guide, "CUDA Environment Variables"; MPS guide):

- unset: every device; set but empty: none (cuInit then fails with CUDA_ERROR_NO_DEVICE);
- a comma-separated list of device indices or UUIDs, enumerated in the order given;
- a UUID is written ``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` (as nvidia-smi prints it) and
  may be shortened to its first characters, ``GPU-`` included;
- the first entry that names no device ends the list: ``0,2,-1,1`` makes devices 0 and 2 visible.
  Here an entry is also invalid when its UUID prefix fits several devices or it names a device
  already listed (a device cannot be enumerated twice).
"""
from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from typing import TypeVar

log = logging.getLogger(__name__)

VARIABLE = "CUDA_VISIBLE_DEVICES"
_INDEX = re.compile(r"\d+")

T = TypeVar("T")


def uuid_text(uuid: bytes) -> str:
    """A 16-byte device UUID as NVIDIA's tools print it: ``GPU-8-4-4-4-12`` lowercase hex."""
    h = uuid.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _entry_index(entry: str, uuids: Sequence[str]) -> int | None:
    if _INDEX.fullmatch(entry):
        index = int(entry)
        return index if index < len(uuids) else None
    if entry[:4].upper() != "GPU-":
        return None                                   # MIG-… and anything else: no such device here
    prefix = entry.lower()
    found = [i for i, u in enumerate(uuids) if u.lower().startswith(prefix)]
    return found[0] if len(found) == 1 else None


def visible_indices(uuids: Sequence[bytes], spec: str | None) -> list[int]:
    """The positions in ``uuids`` (the server's devices, by ordinal) that ``spec`` makes visible,
    in their visible order."""
    if spec is None:
        return list(range(len(uuids)))
    texts = [uuid_text(u) for u in uuids]
    chosen: list[int] = []
    for raw in spec.split(",") if spec.strip() else []:
        entry = raw.strip()
        index = _entry_index(entry, texts)
        if index is None or index in chosen:
            log.info("%s=%s: %r names no further device; the list ends before it", VARIABLE, spec, entry)
            break
        chosen.append(index)
    return chosen


def visible(devices: Sequence[T], spec: str | None = None, *, environ: dict[str, str] | None = None) -> list[T]:
    """The devices (objects with a ``uuid`` attribute, in server order) that
    ``CUDA_VISIBLE_DEVICES`` (``spec``, default from ``environ`` or the process environment) shows."""
    if spec is None:
        spec = (os.environ if environ is None else environ).get(VARIABLE)
    return [devices[i] for i in visible_indices([bytes(d.uuid) for d in devices], spec)]
