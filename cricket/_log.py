"""Logging set-up shared by the command-line entry points."""
from __future__ import annotations

import logging
import os

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(default: str = "WARNING") -> None:
    """Configure the root logger once, at the level named by ``CRICKET_LOG``."""
    level_name = os.environ.get("CRICKET_LOG", default).upper()
    level = getattr(logging, level_name, None)
    if not isinstance(level, int):
        level = logging.WARNING
    logging.basicConfig(level=level, format=FORMAT)


def default_to(level: str) -> None:
    """Use ``level`` when ``CRICKET_LOG`` names none (the server logs its lifecycle at info)."""
    if not os.environ.get("CRICKET_LOG", "").strip():
        logging.getLogger().setLevel(level.upper())
