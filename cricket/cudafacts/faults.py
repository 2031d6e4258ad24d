"""The CUresult codes a running kernel itself causes. After one, CUDA's context is unusable
(the error is "sticky"): every later call returns it until the process starts again."""
from __future__ import annotations

from .curesult import (ASSERT, HARDWARE_STACK_ERROR, ILLEGAL_ADDRESS, ILLEGAL_INSTRUCTION,
                       INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED, LAUNCH_TIMEOUT, MISALIGNED_ADDRESS)

KERNEL_FAULTS = frozenset({ILLEGAL_ADDRESS, LAUNCH_TIMEOUT, ASSERT, HARDWARE_STACK_ERROR, ILLEGAL_INSTRUCTION,
                           MISALIGNED_ADDRESS, INVALID_ADDRESS_SPACE, INVALID_PC, LAUNCH_FAILED})
