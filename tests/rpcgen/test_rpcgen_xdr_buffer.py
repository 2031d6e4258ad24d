"""The generated Cython codec and cricket.xdr share one XDR buffer library (cext/xdr_buffer.pxd)."""
from __future__ import annotations

import re
from pathlib import Path

from rpcgen import load
from rpcgen.emit_cython import emit_cython
from rpcgen_testlib import DATA

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "cext" / "xdr_buffer.pxd"


def _library_names() -> set[str]:
    text = LIBRARY.read_text()
    return set(re.findall(r"^cdef (?:inline )?(?:struct |[\w ]+?\*?)(\w+)[:(]", text, re.M))


def test_library_defines_the_write_buffer_and_read_cursor() -> None:
    names = _library_names()
    assert {"W", "R", "_w_u32", "_w_bytes", "_r_take", "_r_length", "_r_opaque"} <= names


def test_generated_codec_cimports_the_library_and_defines_none_of_it() -> None:
    text = emit_cython(load(str(DATA / "everything.x")), "everything")
    assert "\nfrom xdr_buffer cimport *\n" in text
    defined = set(re.findall(r"^cdef (?:inline )?(?:struct |[\w ]+?\*?)(\w+)[:(]", text, re.M))
    assert not defined & _library_names()


def test_xdr_module_is_built_on_the_library() -> None:
    text = (ROOT / "cext" / "xdr.pyx").read_text()
    assert "from xdr_buffer cimport (" in text
    assert "cdef struct" not in text and "static inline" not in text


def test_the_view_threshold_is_the_same_everywhere() -> None:
    from cricket.xdr import VIEW_MIN
    from rpcgen.model import OPAQUE_VIEW_MIN
    stated = re.search(r"^\s*VIEW_MIN = (\d+)", LIBRARY.read_text(), re.M)
    assert int(stated.group(1)) == OPAQUE_VIEW_MIN == VIEW_MIN
