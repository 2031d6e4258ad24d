"""Build glue: Cython extensions from cext/ and from generated protocol codecs.

Every ``cext/NAME.pyx`` becomes the extension ``cricket._cext.NAME``; its
pure-Python twin lives in the feature package that uses it and is chosen at
import time (see ``cricket/_select.py``).
"""
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent


def cext_extensions() -> list[Extension]:
    return [Extension(f"cricket._cext.{p.stem}", [str(p.relative_to(HERE))])
            for p in sorted((HERE / "cext").glob("*.pyx"))]


def build_extensions() -> list:
    exts = cext_extensions()
    if not exts:
        return []
    from Cython.Build import cythonize
    return cythonize(exts, language_level=3, build_dir="build/cython",
                     compiler_directives={"boundscheck": False, "wraparound": False})


setup(ext_modules=build_extensions())
