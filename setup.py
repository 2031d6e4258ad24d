"""Build glue: Cython extensions from cext/ and from generated protocol codecs.

Every ``cext/NAME.pyx`` becomes the extension ``cricket._cext.NAME``; its
pure-Python twin lives in the feature package that uses it and is chosen at
import time (see ``cricket/_select.py``).

Every .x file in ``X_FILES`` is compiled by our rpcgen at build time
(``python -m rpcgen X -o <its dir> --cython``): ``<stem>.py`` and
``_<stem>_xdr.pyx`` appear beside it, and the .pyx is built as the extension named
after its package path (``cricket/protocol/_cricket_xdr.pyx`` →
``cricket.protocol._cricket_xdr``).  Editing a .x and reinstalling regenerates both.

The client core (``CORE_MODULES``: the runtime state, the registry, the runtime and driver API
layers) is plain Python that Cython compiles as it stands (pure-Python mode): each ``.py`` becomes
an extension of the same dotted name beside it (``cricket/client/runtime.py`` →
``cricket.client.runtime``), which the import system prefers to the source. The ``.py`` is the
pure-Python twin; ``cricket/_select.py`` (``use_core_sources``) makes imports take it when
``CRICKET_PUREPYTHON=1`` or when the extension is older than its source. One module name, one
module object: one client state per process, whichever library the application entered through.
"""
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent

#: The project's interface definitions, relative to this file.
X_FILES: list[str] = [
    "cricket/protocol/cricket.x",
]

#: The client core, compiled from its Python source into extensions of the same name.
CORE_MODULES: list[str] = [
    "cricket/client/api.py",
    "cricket/client/runtime.py",
    "cricket/client/runtime_api.py",
    "cricket/client/runtime_calls.py",
    "cricket/client/driver_api.py",
    "cricket/rpc/client.py",
]


def core_extensions() -> list[Extension]:
    return [Extension(".".join(Path(p).with_suffix("").parts), [p]) for p in CORE_MODULES]


def cext_extensions() -> list[Extension]:
    return [Extension(f"cricket._cext.{p.stem}", [str(p.relative_to(HERE))])
            for p in sorted((HERE / "cext").glob("*.pyx"))]


def rpcgen_extensions() -> list[Extension]:
    """Run rpcgen on each of X_FILES and return the generated codecs as extensions."""
    exts = []
    for rel in X_FILES:
        x = HERE / rel
        subprocess.run([sys.executable, "-m", "rpcgen", str(x), "-o", str(x.parent), "--cython"],
                       cwd=HERE, check=True, stdout=subprocess.DEVNULL)
        pyx = (x.parent / f"_{x.stem}_xdr.pyx").relative_to(HERE)
        exts.append(Extension(".".join(pyx.with_suffix("").parts), [str(pyx)]))
    return exts


def build_extensions() -> list:
    exts = cext_extensions() + rpcgen_extensions()
    if not exts:
        return []
    from Cython.Build import cythonize
    compiled = cythonize(exts, language_level=3, build_dir="build/cython",
                         compiler_directives={"boundscheck": False, "wraparound": False})
    # The core stays plain Python: annotations are documentation, not C types (a ``float`` or
    # ``list`` annotation would otherwise become a C double or an exact type check), and
    # indexing keeps Python's checks.
    return compiled + cythonize(core_extensions(), language_level=3, build_dir="build/cython",
                                compiler_directives={"annotation_typing": False,
                                                     "always_allow_keywords": True})


class BuildExtWithShims(build_ext):
    """Also builds the native shims: the libcudart.so.13 shim (cext/preload/build.py) into cricket/_preload/
    and the libcuda.so.1 replacement (cext/driver/build.py) into cricket/_driver/."""

    def run(self) -> None:
        super().run()
        root = HERE if self.inplace else Path(self.build_lib)
        subprocess.run([sys.executable, str(HERE / "cext" / "preload" / "build.py"),
                        str(root / "cricket" / "_preload"), "--optional",
                        "--gen-dir", str(Path(self.build_temp) / "preload")], check=True)
        subprocess.run([sys.executable, str(HERE / "cext" / "driver" / "build.py"),
                        str(root / "cricket" / "_driver"), "--optional",
                        "--gen-dir", str(Path(self.build_temp) / "driver")], check=True)


setup(ext_modules=build_extensions(), cmdclass={"build_ext": BuildExtWithShims})
