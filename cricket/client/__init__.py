"""The cricket client: CUDA runtime-API semantics on the Python side of the libcudart shim.

For now it holds only ``runtime_api`` (the registry of runtime functions the shim forwards to)
and ``cudart_api`` (the pure-Python twin of the shim's Cython entry points).
"""
