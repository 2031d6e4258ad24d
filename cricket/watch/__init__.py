"""Watching a running server: ``cricket status`` (one report, ``--probe``, ``--json``) and
``cricket top`` (the same, refreshing)."""
