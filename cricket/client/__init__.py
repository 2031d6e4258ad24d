"""The cricket client: CUDA runtime- and driver-API semantics behind the libcudart.so.13 shim and
the libcuda.so.1 replacement, and the Python API (``api``) used by tests and Python programs.

The layers, each importing only those below it (``docs/architecture.md``; checked by the
import-linter contract in ``pyproject.toml``): the entries (``cudart_api``, ``cuda_api``,
``run_cli``) → the faces (``runtime_api``, ``driver_api``, ``api``, ``aio``) → their feature
modules and guards (``runtime_calls``, ``jit_link``, ``runtime_face``, ``driver_face``,
``launch_attributes``) → the process state (``runtime``) → mapped memory and the local server →
the session (``session``) → the copy engine, device output, address windows, the registry of
registered fatbins → ``faces`` → ``errors``.

The client core (``cricket/_core.py``) is compiled by Cython from these very ``.py`` files into
extensions of the same names; the sources are its pure-Python twin (``CRICKET_PUREPYTHON=1``).
The choice is made here, once, before any of them is imported.
"""
from cricket import _core, _select

CORE = _core.CORE[__name__]

CORE_BUILD = _select.use_core_sources(__name__, __path__[0], CORE)
