"""Build a generated Cython codec in place (for tests, benchmarks and ad-hoc use).

The project's own ``.x`` files are built by ``setup.py``; this helper is for a
generated package outside the project: ``build_codec(root, "pkg._stem_xdr")`` compiles
``root/pkg/_stem_xdr.pyx`` into ``root/pkg/_stem_xdr*.so`` with Cython and the C compiler.
The codec cimports the XDR buffer library (``xdr_buffer.pxd``), found in ``XDR_INCLUDE``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from rpcgen.errors import RpcgenError

#: Where ``xdr_buffer.pxd`` lives: the checkout's ``cext/`` (set ``RPCGEN_XDR_INCLUDE`` to override).
XDR_INCLUDE = os.environ.get("RPCGEN_XDR_INCLUDE") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cext")

_SETUP = textwrap.dedent("""\
    from setuptools import Extension, setup
    from Cython.Build import cythonize
    setup(script_args=["build_ext", "--inplace", "-q", "--build-temp", {tmp!r}],
          ext_modules=cythonize([Extension({name!r}, [{src!r}])], language_level=3,
                                build_dir={tmp!r}, quiet=True, include_path=[{include!r}],
                                compiler_directives={{"boundscheck": False, "wraparound": False}}))
""")


def build_codec(root: str, module_name: str, timeout: float = 600, opt: str | None = None) -> str:
    """Compile ``root/<module path>.pyx``; returns the path of the built extension. The C compiler
    optimises with ``$CFLAGS`` (default ``-O2``); ``opt`` (``"-O0"``: a build that only has to
    work, in about half the time) comes after them."""
    rel = module_name.replace(".", os.sep) + ".pyx"
    tmp = os.path.join(root, "_build")
    code = _SETUP.format(name=module_name, src=rel, tmp=tmp, include=XDR_INCLUDE)
    cflags = os.environ.get("CFLAGS", "-O2") + (f" {opt}" if opt else "")
    env = dict(os.environ, CFLAGS=cflags)
    res = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         timeout=timeout, env=env)
    if res.returncode != 0:
        raise RpcgenError(None, f"building {module_name} failed:\n{res.stdout}\n{res.stderr}")
    d = os.path.join(root, os.path.dirname(rel))
    stem = os.path.basename(rel)[:-4]
    for f in os.listdir(d):
        if f.startswith(stem + ".") and f.endswith((".so", ".pyd")):
            return os.path.join(d, f)
    raise RpcgenError(None, f"building {module_name} produced no extension in {d}")
