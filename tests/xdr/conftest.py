"""Run every XDR test against both implementations (the Cython one only where built)."""
from __future__ import annotations

import importlib

import pytest

from cricket._select import pure_python_forced


def _impls() -> list:
    out = [pytest.param("cricket.xdr._pure", id="pure")]
    if not pure_python_forced():
        out.insert(0, pytest.param("cricket._cext.xdr", id="cython"))
    return out


@pytest.fixture(params=_impls(), scope="session")
def xdr(request):
    try:
        return importlib.import_module(request.param)
    except ImportError as exc:  # a checkout without `make build`
        pytest.skip(f"{request.param} is not built: {exc}")
