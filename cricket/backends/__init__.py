"""Backends: the interface (:mod:`.base`), the registry and loader (:mod:`.registry`), and the
built-in ``cuda`` (:mod:`.cuda`) and ``emu`` (:mod:`.emu_backend` over :mod:`.emu`) backends."""
