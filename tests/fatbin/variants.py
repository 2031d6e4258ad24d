"""The programs the fatbin tests have nvcc build (each once per session, conftest.py's
``nvcc_builds``), by name."""
from __future__ import annotations

import pathlib

CUDA = pathlib.Path(__file__).resolve().parent / "cuda"

PARAMS = ["params.cu", "main.cu"]
RDC = ["params.cu", "main.cu", "rdc_a.cu", "rdc_b.cu"]

#: name: (nvcc options, sources, output file). Each is compiled once per session, on first use.
VARIANTS: dict[str, tuple[list[str], list[str], str]] = {
    "default": ([], PARAMS, "app"),
    "sm75": (["-arch=sm_75"], PARAMS, "app"),
    "sm90": (["-arch=sm_90"], PARAMS, "app"),
    "gencode": (["-gencode", "arch=compute_75,code=sm_75",
                 "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
                 "-gencode", "arch=compute_100,code=sm_100"], PARAMS, "app"),
    "compress_all": (["-Xfatbin", "-compress-all"], PARAMS, "app"),
    "cm_default": (["--compress-mode=default"], PARAMS, "app"),
    "cm_size": (["--compress-mode=size"], PARAMS, "app"),
    "cm_speed": (["--compress-mode=speed"], PARAMS, "app"),
    "cm_balance": (["--compress-mode=balance"], PARAMS, "app"),
    "cm_none": (["--compress-mode=none"], PARAMS, "app"),
    "debug": (["-G"], PARAMS, "app"),
    "lineinfo": (["-lineinfo"], PARAMS, "app"),
    "rdc": (["-rdc=true"], RDC, "app"),
    "cudart_shared": (["-cudart", "shared"], PARAMS, "app"),
    "lib": (["-shared", "-Xcompiler", "-fPIC"], ["params.cu"], "libparams.so"),
    "object": (["-c"], ["params.cu"], "params.o"),
    "lto": (["-dc", "-gencode", "arch=compute_75,code=lto_75"], ["params.cu"], "lto.o"),
    # dlopen'ed by the wrapper-address tests, against the stand-in libcudart.so.13
    "lib_cs": (["-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"], ["lib.cu"], "libk_cs.so"),
    "rdc_lib_cs": (["-rdc=true", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"],
                   ["rdc_a.cu", "rdc_b.cu"], "librdc_cs.so"),
}
