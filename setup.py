"""Build glue: Cython extensions from cext/ and from generated protocol codecs, and the native shims.

Every ``cext/NAME.pyx`` becomes the extension ``cricket._cext.NAME``; its
pure-Python twin lives in the feature package that uses it and is chosen at
import time (see ``cricket/_select.py``).

Every .x file in ``X_FILES`` is compiled by our rpcgen at build time
(``python -m rpcgen X -o <its dir> --cython``): ``<stem>.py`` and
``_<stem>_xdr.pyx`` appear beside it, and the .pyx is built as the extension named
after its package path (``cricket/protocol/_cricket_xdr.pyx`` →
``cricket.protocol._cricket_xdr``).  Editing a .x and reinstalling regenerates both.

Everything else is plain Python, never compiled: the client's per-call hot paths (the launch
queue, the copies, the RPC client's wait for a reply) are ``cext/*.pyx`` modules like the others.

How it builds (``build_ext``): rpcgen, then Cython and the C compiler on every CPU (``cythonize``
with ``nthreads``, ``build_ext -j``; the largest module first), while the two shims
(``cext/preload``, ``cext/driver``) build beside them. Nothing is done twice: Cython and the shims
skip what is up to date, and an in-place build (``--inplace``, or ``pip install -e``, which builds
in place) skips every extension whose file beside its source is newer than its C source, so
``pip install --no-build-isolation -e .`` after ``setup.py build_ext --inplace`` (or the other way
round) compiles nothing. (With build isolation, the freshly installed Cython's own .pxd files are
newer than the C sources of the modules that cimport them, so those are built again.) No debug
information unless ``CRICKET_DEBUG_BUILD=1``; a change of flags rebuilds everything.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent

#: The project's interface definitions, relative to this file.
X_FILES: list[str] = [
    "cricket/protocol/cricket.x",
]

#: C optimisation of the hand-written hot paths and generated codecs (``cext/*.pyx``, rpcgen):
#: -O3, as before (-O2 would save a fifth of their compile time, ~6 s of CPU).
HOT_PATH_OPT = "-O3"
#: Cython directives of the hand-written modules and the generated codecs.
HOT_PATH_DIRECTIVES = {"boundscheck": False, "wraparound": False}


def debug_build() -> bool:
    """``CRICKET_DEBUG_BUILD=1``: keep debug information (``-g``) in everything built."""
    return os.environ.get("CRICKET_DEBUG_BUILD", "").strip().lower() not in ("", "0", "no", "false")


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _c_flags(opt: str) -> list[str]:
    # Appended after Python's own CFLAGS (-g -O3 on most builds): the last -O and -g win.
    return [opt, "-g" if debug_build() else "-g0"]


#: What the last in-place build compiled with: extensions built with other flags are rebuilt.
FLAGS_RECORD = HERE / "build" / "extension-flags.txt"


def _flags_key() -> str:
    return repr((_c_flags(HOT_PATH_OPT), os.environ.get("CC", ""), os.environ.get("CFLAGS", "")))


def cext_extensions() -> list[Extension]:
    return [Extension(f"cricket._cext.{p.stem}", [str(p.relative_to(HERE))],
                      depends=[str(d.relative_to(HERE)) for d in [HERE / "cricket" / "_cext" / f"{p.stem}.pxd"]
                               if d.exists()],
                      extra_compile_args=_c_flags(HOT_PATH_OPT))
            for p in sorted((HERE / "cext").glob("*.pyx"))]


def rpcgen_extensions() -> list[Extension]:
    """The generated codecs of X_FILES as extensions (their sources appear when rpcgen runs)."""
    exts = []
    for rel in X_FILES:
        x = Path(rel)
        pyx = x.parent / f"_{x.stem}_xdr.pyx"
        exts.append(Extension(".".join(pyx.with_suffix("").parts), [str(pyx)],
                              extra_compile_args=_c_flags(HOT_PATH_OPT)))
    return exts


def run_rpcgen() -> None:
    """Run rpcgen on each of X_FILES (it leaves unchanged outputs alone, so builds stay incremental).

    A source checkout's protocol package refuses a generated module older than its .x (it never
    regenerates one at import; ``cricket/protocol/__init__.py``): one that rpcgen left alone
    because it did not change (a .x touched by git, say) gets the time of now. The Cython codec
    keeps its time, so its extension is not rebuilt for nothing."""
    for rel in X_FILES:
        x = HERE / rel
        subprocess.run([sys.executable, "-m", "rpcgen", str(x), "-o", str(x.parent), "--cython"],
                       cwd=HERE, check=True, stdout=subprocess.DEVNULL)
        generated = x.with_suffix(".py")
        if generated.stat().st_mtime < x.stat().st_mtime:
            os.utime(generated)


def cythonize_all(exts: list[Extension], jobs: int, force: bool) -> None:
    """Translate the .pyx sources of ``exts`` to C (in ``build/cython``), ``jobs`` at a time;
    each extension's sources become its C files."""
    from Cython.Build import cythonize
    # cext/ holds the XDR buffer library (xdr_buffer.pxd) that cext/xdr.pyx and the generated
    # codecs cimport, and the checkout the fixed layouts rpcgen writes beside each .x
    # (cricket/protocol/_cricket_layout.pxd) that hot paths in cext/ cimport; cythonize follows
    # the cimports, so a change to either (an edit to a .x) rebuilds what uses it.
    options = dict(language_level=3, build_dir="build/cython", nthreads=jobs if jobs > 1 else 0,
                   force=force, quiet=True, include_path=[str(HERE / "cext"), str(HERE)])
    for ext in exts:
        # A module's own .pxd (cricket/_cext/NAME.pxd, where Cython finds it by the full module
        # name) is not among the dependencies cythonize tracks: a newer one drops the C file.
        pyx = Path(ext.sources[0])
        own, c_file = HERE / "cricket" / "_cext" / f"{pyx.stem}.pxd", HERE / "build" / "cython" / pyx.with_suffix(".c")
        if own.exists() and c_file.exists() and own.stat().st_mtime > c_file.stat().st_mtime:
            c_file.unlink()
    if exts:
        # cythonize returns new Extension objects; build_ext keeps its own (finalized) ones.
        translated = {e.name: e.sources
                      for e in cythonize(exts, compiler_directives=HOT_PATH_DIRECTIVES, **options)}
        for ext in exts:
            ext.sources = translated[ext.name]


def remove_stale_plain_extensions() -> list[Path]:
    """Delete extensions built from plain ``.py`` client modules by checkouts before issue 20
    (``cricket/client/runtime.cpython-*.so`` beside ``runtime.py``): the import system would take
    them ahead of the source. Returns what was deleted."""
    stale = [ext for directory in ("cricket/client", "cricket/rpc")
             for ext in (HERE / directory).glob("*.so")
             if (ext.parent / (ext.name.split(".")[0] + ".py")).exists()]
    for ext in stale:
        ext.unlink()
        print(f"setup.py: removed {ext.relative_to(HERE)}, an old build of the plain {ext.name.split('.')[0]}.py")
    return stale


class BuildPy(build_py):
    """Generates the protocol modules first, so that a wheel carries them."""

    def run(self) -> None:
        run_rpcgen()
        super().run()


class BuildExt(build_ext):
    """Builds the Cython extensions in parallel, and the native shims beside them: the
    libcudart.so.13 shim (cext/preload/build.py) into cricket/_preload/ and the libcuda.so.1
    replacement (cext/driver/build.py) into cricket/_driver/."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = cpu_count()

    def run(self) -> None:
        shims = self._start_shims()
        try:
            if self.inplace:
                remove_stale_plain_extensions()
            run_rpcgen()
            jobs = self.parallel if isinstance(self.parallel, int) and self.parallel > 1 else 1
            cythonize_all(self.extensions, jobs, bool(self.force))
            exts = self.extensions
            if self.inplace:
                # The files beside the sources decide; build/lib may hold older builds.
                if not self.force and self._same_flags_as_last_build():
                    exts = [e for e in exts if not self._up_to_date_in_place(e)]
                self.force = True
            # Longest first: the build's end is then not one big module compiling alone.
            self.extensions = sorted(exts, key=lambda e: -sum(os.path.getsize(s) for s in e.sources))
            if self.extensions:
                super().run()
            if self.inplace:
                FLAGS_RECORD.parent.mkdir(parents=True, exist_ok=True)
                FLAGS_RECORD.write_text(_flags_key())
        finally:
            failed = [name for name, proc in shims if proc.wait() != 0]
        if failed:
            raise SystemExit(f"build_ext: building {' and '.join(failed)} failed (see above)")

    def _start_shims(self) -> list[tuple[str, subprocess.Popen]]:
        # In place, the generated sources (and the record of what was built) stay in build/NAME, as
        # with a build by hand; pip's editable build has a temporary build_temp.
        root, temp = (HERE, HERE / "build") if self.inplace else (Path(self.build_lib), Path(self.build_temp))
        procs = []
        for name, outdir in (("preload", "_preload"), ("driver", "_driver")):
            procs.append((f"cext/{name}", subprocess.Popen(
                [sys.executable, str(HERE / "cext" / name / "build.py"), str(root / "cricket" / outdir),
                 "--optional", "--gen-dir", str(temp / name)])))
        return procs

    @staticmethod
    def _same_flags_as_last_build() -> bool:
        try:
            return FLAGS_RECORD.read_text() == _flags_key()
        except OSError:
            return False

    def _up_to_date_in_place(self, ext: Extension) -> bool:
        """True when the extension's file beside its source is newer than all it is built from."""
        build_py = self.get_finalized_command("build_py")
        fullname = self.get_ext_fullname(ext.name)
        package = ".".join(fullname.split(".")[:-1])
        target = Path(build_py.get_package_dir(package)) / Path(self.get_ext_filename(fullname)).name
        try:
            built = target.stat().st_mtime
            return all(os.path.getmtime(s) <= built for s in [*ext.sources, *ext.depends])
        except OSError:
            return False


setup(ext_modules=cext_extensions() + rpcgen_extensions(),
      cmdclass={"build_ext": BuildExt, "build_py": BuildPy})
