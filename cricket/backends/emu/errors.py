"""The one exception type of the emulator: a CUDA driver error code with its name and a message."""
from __future__ import annotations

# The CUDA driver codes (CUresult) the emulator reports, from the one table of them.
from ...cudafacts.faults import KERNEL_FAULTS
from ...cudafacts.curesult import (  # noqa: F401  (the emulator's modules import them from here)
    CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_PTX,
    CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
    CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_NO_BINARY_FOR_GPU,
    CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_OUT_OF_MEMORY,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION, error_name)

# Errors after which a real context is unusable: the emulated device keeps them (see EmuDevice).
STICKY_CODES = KERNEL_FAULTS     # a kernel's fault leaves the context unusable, as on a GPU


class EmuError(Exception):
    """A failure reported as CUDA would: ``code`` is the CUresult value, ``name`` its symbolic name.

    ``kernel``, ``instruction`` and ``source`` (``file:line`` from ``.loc``) are filled in when the
    error happened while a kernel ran.
    """

    def __init__(self, code: int, message: str, *, kernel: str | None = None,
                 instruction: str | None = None, source: str | None = None) -> None:
        self.code = code
        self.name = error_name(code)
        self.message = message
        self.kernel = kernel
        self.instruction = instruction
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.kernel:
            where.append(f"kernel {self.kernel}")
        if self.instruction:
            where.append(f"at `{self.instruction}`")
        if self.source:
            where.append(f"({self.source})")
        suffix = f" [{' '.join(where)}]" if where else ""
        return f"{self.name} ({self.code}): {self.message}{suffix}"

    def locate(self, kernel: str | None, instruction: str | None, source: str | None) -> "EmuError":
        """Attach where the error happened (only fields not already set) and refresh the text."""
        self.kernel = self.kernel or kernel
        self.instruction = self.instruction or instruction
        self.source = self.source or source
        self.args = (self._text(),)
        return self


def not_supported(feature: str, hint: str = "") -> EmuError:
    msg = f"{feature} is not supported by the emu backend"
    return EmuError(CUDA_ERROR_NOT_SUPPORTED, msg + (f"; {hint}" if hint else ""))
