"""``cricket.xdr`` picks the Cython codec unless CRICKET_PUREPYTHON=1 asks for the twin."""
from __future__ import annotations

import os
import subprocess
import sys


def _impl_with(env_value: str | None) -> str:
    env = dict(os.environ)
    env.pop("CRICKET_PUREPYTHON", None)
    if env_value is not None:
        env["CRICKET_PUREPYTHON"] = env_value
    out = subprocess.run([sys.executable, "-c", "import cricket.xdr as x; print(x.IMPLEMENTATION)"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_pure_python_forced_by_environment():
    assert _impl_with("1") == "pure"


def test_compiled_codec_used_when_built():
    try:
        import cricket._cext.xdr  # noqa: F401
    except ImportError:
        expected = "pure"
    else:
        expected = "cython"
    assert _impl_with(None) == expected


def test_facade_exports_the_contract():
    import cricket.xdr as x
    for name in ("Packer", "Unpacker", "XdrError", "XdrTruncatedError", "XdrLengthError",
                 "XdrDiscriminantError", "XdrValueError"):
        assert hasattr(x, name)
    assert issubclass(x.XdrError, ValueError)
