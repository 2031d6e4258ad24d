"""The kernel signatures of tests/fatbin/cuda/*.cu, and the layouts the C ABI gives them.

Expected layouts are derived here from the parameter types (each parameter at
the next multiple of its alignment), not copied from a decoder's output.
"""
from __future__ import annotations

# (size, alignment) of each parameter type, from the definitions in params.cu.
TYPES = {
    "char": (1, 1), "unsigned char": (1, 1), "short": (2, 2), "int": (4, 4), "long long": (8, 8),
    "float": (4, 4), "double": (8, 8), "ptr": (8, 8),
    "S24": (24, 8),          # struct { int; double; char; }
    "V16": (16, 16),         # struct alignas(16) { float x, y, z, w; }
    "Big4000": (4000, 1),    # struct { char[4000]; }
    "Big8192": (8192, 1),    # struct { char[8192]; }
}

PARAMS_KERNELS = {
    "_Z7k_typescsixfdPi3S24h3V16": ["char", "short", "int", "long long", "float", "double", "ptr",
                                    "S24", "unsigned char", "V16"],
    "_Z5k_big7Big4000i": ["Big4000", "int"],
    "_Z6k_hugei7Big8192Pf": ["int", "Big8192", "ptr"],
    "k_externc": ["int", "ptr"],
    "_Z10k_noparamsv": [],
    "_Z8k_boundsPf": ["ptr"],
    "_Z6k_tmplIfLi64EEvPT_S0_": ["ptr", "float"],
    "_Z6k_tmplIdLi32EEvPT_S0_": ["ptr", "double"],
}
LIB_KERNELS = {"_Z10lib_kernelPdxc": ["ptr", "long long", "char"]}
RDC_KERNELS = {
    "_Z10rdc_kernelPii": ["ptr", "int"],
    "_Z12rdc_kernel_bfPd": ["float", "ptr"],
    "_Z15rdc_kernel_usedPi": ["ptr"],
}
ALL_KERNELS = {**PARAMS_KERNELS, **LIB_KERNELS, **RDC_KERNELS}

#: static __shared__ bytes: tile[N] of T
SHARED = {"_Z6k_tmplIfLi64EEvPT_S0_": 64 * 4, "_Z6k_tmplIdLi32EEvPT_S0_": 32 * 8}
#: __launch_bounds__(128)
MAX_THREADS = {"_Z8k_boundsPf": (128, 1, 1)}
#: name: (kind, bytes)
VARIABLES = {"g_dev_var": ("device", 16 * 4), "c_const": ("constant", 32 * 4), "g_dev_init": ("device", 4)}

#: Above this many parameter bytes ptxas writes KPARAM_INFO_V2 records.
V2_THRESHOLD = 4352


def expected_layout(types: list[str]) -> tuple[list[tuple[int, int, int]], int]:
    """[(ordinal, offset, size)] and the total size, by the C rule."""
    out, offset = [], 0
    for ordinal, t in enumerate(types):
        size, align = TYPES[t]
        offset = (offset + align - 1) // align * align
        out.append((ordinal, offset, size))
        offset += size
    return out, offset


def pointer_mask(types: list[str]) -> list[bool]:
    return [t == "ptr" for t in types]


def check_kernel_against_signature(layout, types) -> None:
    expected, total = expected_layout(types)
    assert layout.offsets_and_sizes == expected, layout.name
    assert layout.param_size == total, layout.name
    if layout.source == "cubin":
        assert layout.params_v2 == (total > V2_THRESHOLD), layout.name
