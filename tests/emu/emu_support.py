"""Small helpers the emu test modules share (they import this module, never each other)."""
from __future__ import annotations

import numpy as np

from cricket.backends.emu import pack_params


def put(dev, a: np.ndarray) -> int:
    """A new allocation on ``dev`` holding ``a``; its device pointer."""
    p = dev.mem_alloc(a.nbytes)
    dev.memcpy_htod(p, a)
    return p


def launch(dev, module, kernel, grid, block, *args) -> None:
    """``kernel`` of ``module`` launched on ``dev`` with ``args`` packed by its parameter layout."""
    fn = module.get_function(kernel)
    dev.launch(fn, grid, block, 0, pack_params(fn, *args))
