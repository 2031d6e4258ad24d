"""The cricket client: CUDA runtime- and driver-API semantics behind the libcudart.so.13 shim and
the libcuda.so.1 replacement, and the Python API (``api``) used by tests and Python programs.

The layers, each importing only those below it (``docs/architecture.md``; checked by the
import-linter contract in ``pyproject.toml``): the entries (``cudart_api``, ``cuda_api``,
``run_cli``) → the faces (``runtime_api``, ``driver_api``, ``api``, ``aio``) → their feature
modules and guards (``runtime_calls``, ``jit_link``, ``runtime_face``, ``driver_face``,
``launch_attributes``) → the process state (``runtime``) → mapped memory and the local server →
the session (``session``) → the copy engine, device output, address windows, the registry of
registered fatbins → ``faces`` → ``errors``.

The modules here are plain Python. The per-call hot paths are Cython modules in ``cext/`` with a
pure-Python twin here of the same API (``launch_queue``, ``copies``, ``runtime_guard``,
``hostmem``), chosen at import by ``cricket._select.load`` (``CRICKET_PUREPYTHON=1`` takes the twins).
"""
