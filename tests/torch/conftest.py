"""Stock PyTorch under `cricket run` on the emu backend. The tests need a Python that imports
torch (the CUDA 13 wheel): this one, or CRICKET_TORCH_PYTHON; `make test-torch` makes one. Every
test here carries the `torch` marker and skips, with the reason, where torch is missing."""
from __future__ import annotations

from pathlib import Path

import pytest

from .torch_support import torch_python


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.torch)
            item.add_marker(pytest.mark.slow)
            why = torch_python()[1]
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
