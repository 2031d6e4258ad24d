"""The cricket client: CUDA runtime- and driver-API semantics behind the libcudart.so.13 shim and
the libcuda.so.1 replacement, and the Python API (``api``) used by tests and Python programs.

The client core (``CORE``: the protocol client ``api.Connection``, the process's one client
state ``runtime.RUNTIME``, the registry of runtime functions, the runtime and driver API layers)
is compiled by Cython from these very ``.py`` files into extensions of the same names; the
sources are its pure-Python twin (``CRICKET_PUREPYTHON=1``). The choice is made here, once,
before any of them is imported.
"""
from cricket import _select

CORE = ("api", "runtime", "runtime_api", "runtime_calls", "driver_api")

CORE_BUILD = _select.use_core_sources(__name__, __path__[0], CORE)
