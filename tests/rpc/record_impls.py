"""The record-marking modules under test: the pure-Python twin and, when built, the Cython one."""
from __future__ import annotations

import importlib


def record_impls() -> list:
    mods = [importlib.import_module("cricket.rpc._record")]
    try:
        mods.append(importlib.import_module("cricket._cext.record"))
    except ImportError:
        pass
    return mods
