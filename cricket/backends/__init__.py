"""Execution backends of the cricket server: ``cuda`` (a real GPU) and ``emu`` (PTX on the CPU)."""
