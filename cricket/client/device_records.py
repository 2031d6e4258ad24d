"""A registered kernel or variable on a device other than 0.

nvcc's start-up code registers each kernel and variable once, for the process; CUDA loads the
module into each device's context where it is used. Device 0's records are the registry's own
(``Runtime.kernels``, ``Runtime.vars``); on another device a record of the same name holds that
device's function handle or variable address, and the module is loaded there under the key
``(fatbin handle, device)``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

R = TypeVar("R")


def module_key(handle: int, device: int) -> Any:
    """The key of a fatbin's module on ``device`` in ``Runtime.modules``."""
    return handle if device == 0 else (handle, device)


def on_device(rt: Any, record: R, device: int) -> R:
    """``record`` (a KernelRecord or VarRecord of device 0) as it is on ``device``: resolved there
    at its first use, as device 0's is."""
    host = getattr(record, "host_fun", None) or getattr(record, "host_var")
    key = (host, device)
    found = rt.device_records.get(key)
    if found is None:
        blank = {"function": 0, "attributes": {}} if hasattr(record, "function") else {"ptr": 0}
        found = rt.device_records.setdefault(key, dataclasses.replace(record, **blank))
    return found


def device_of(rt: Any, ptr: int) -> int:
    """The device of the allocation holding ``ptr`` (``Runtime.allocation_devices`` files those not
    on device 0); a device address outside every allocation (a module variable): the current one."""
    found = rt.allocation_table.allocation_at(ptr)
    if found is not None:
        return rt.allocation_devices.get(found[0], 0)
    return rt.thread.device


def forget_fatbin(rt: Any, handle: int) -> None:
    """The application unregistered fatbin ``handle``: drop its records and modules on every device."""
    for key in [key for key, record in rt.device_records.items() if record.handle == handle]:
        del rt.device_records[key]
    for key in [key for key in rt.modules if isinstance(key, tuple) and key[0] == handle]:
        del rt.modules[key]
