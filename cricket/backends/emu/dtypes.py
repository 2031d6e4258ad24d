"""PTX types as NumPy dtypes: register storage, instruction compute types, sizes."""
from __future__ import annotations

import numpy as np

# register storage dtype by declared PTX type
STORAGE = {"b8": "u8", "u8": "u8", "s8": "s8", "b16": "u16", "u16": "u16", "s16": "s16", "f16": "u16",
           "bf16": "u16", "b32": "u32", "u32": "u32", "s32": "s32", "f32": "f32", "f16x2": "u32",
           "bf16x2": "u32", "s16x2": "u32", "u16x2": "u32", "b64": "u64", "u64": "u64", "s64": "s64", "f64": "f64", "pred": "b_"}
# compute dtype by instruction type
COMPUTE = dict(STORAGE, f16="f16", bf16="u16")
NP = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32, "s32": np.int32,
      "u64": np.uint64, "s64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64, "b_": np.bool_}
SIZE = {k: np.dtype(v).itemsize for k, v in NP.items()}
UNS = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}
SGN = {1: "s8", 2: "s16", 4: "s32", 8: "s64"}
TYPES = set(STORAGE)
# packed integer SIMD types: two 16-bit halves in a 32-bit register
INT_X2 = ("s16x2", "u16x2")
CMP_INT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
SPACES = {"global", "shared", "local", "param", "const", "generic"}


def type_mods(mods) -> list[str]:
    return [m for m in mods if m in TYPES]
