"""Cooperative launches (``CR_LAUNCH_COOPERATIVE_ASYNC``): what the server asks of the backend."""
from __future__ import annotations

from typing import Any

from ..backends.base import BackendError, Device
from ..cudafacts import curesult


def launch_options(device: Device) -> dict[str, Any]:
    """The keyword arguments of a cooperative ``Device.launch``; NOT_SUPPORTED where the backend
    cannot run every block of a grid at once."""
    if not getattr(device, "cooperative_launch", False):
        raise BackendError(curesult.NOT_SUPPORTED,
                           f"the {type(device).__name__} backend has no cooperative launches (grid.sync())")
    return {"cooperative": True}
