"""The client core: the plain Python modules Cython compiles as they stand into extensions of the
same dotted name (``setup.py``), chosen against their source at import (``_select.use_core_sources``,
called from each package's ``__init__``). The one list of them; ``setup.py`` reads it as a literal.

They are the modules on the per-call path of the CUDA client: the API faces' guards and entries,
the process state with the launch queue and the copies, the session, and the blocking RPC client.
"""
CORE: dict[str, tuple[str, ...]] = {
    "cricket.client": ("session", "api", "runtime", "runtime_face", "runtime_api", "runtime_calls",
                       "driver_face", "driver_api"),
    "cricket.rpc": ("client",),
}
