"""Fixtures of the client tests."""
from __future__ import annotations

import os
from typing import Callable

import pytest


@pytest.fixture
def in_forked_child() -> Callable[[Callable[[], bool]], bool]:
    """``run(check)``: calls ``check`` in a forked child of the test process and says whether it
    returned True there (an exception in the child counts as False); the child never returns into
    pytest."""
    def run(check: Callable[[], bool]) -> bool:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = 0 if check() else 2
            finally:
                os.write(write, bytes([status]))
                os._exit(0)
        os.close(write)
        result = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
        return result == b"\0"
    return run
