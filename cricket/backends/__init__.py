"""Execution backends of the cricket server: ``cuda`` (a real GPU) and ``emu`` (PTX on the CPU).

The interface is :mod:`.base`, the registry and loader :mod:`.registry`; ``cuda`` lives in
:mod:`.cuda`, and ``emu`` is the engine :mod:`.emu` behind the adapter :mod:`.emu_backend`.
"""
