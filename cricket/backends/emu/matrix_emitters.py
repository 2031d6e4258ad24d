"""Emitters of the warp matrix instructions: wmma.load/store/mma, mma.sync, ldmatrix, stmatrix,
movmatrix, and the tf32 conversion that goes with them (``cvt.rna.tf32.f32``).

Each emitter reads the fragment registers (as raw ``.b32``/``.b64`` bits), calls the run-time
operation in ``warp_matrix`` (bound once per kernel as ``wm``) and writes the result registers.
"""
from __future__ import annotations

from . import warp_matrix
from .errors import not_supported
from .fragments import ELEMENT_BITS, mma_fragments, quad_pair_fragments, wmma_fragment, wmma_matrix
from .ptx.ast import Instr, Vec

MATRIX_OPS = {"wmma", "mma", "ldmatrix", "stmatrix", "movmatrix"}
_WMMA_TYPES = ("f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s32", "s4", "u4", "b1")
_MMA_SHAPES = ("m8n8k4", "m8n8k16", "m8n8k32", "m8n8k128", "m16n8k4", "m16n8k8", "m16n8k16", "m16n8k32",
               "m16n8k64", "m16n8k128", "m16n8k256")
_INTEGER = ("s8", "u8", "s4", "u4")


def _form(ins: Instr) -> str:
    return ".".join((ins.op,) + ins.mods)


def _items(o) -> list:
    return list(o.items) if isinstance(o, Vec) else [o]


class MatrixEmitters:
    """Mixin of ``InstructionEmitters`` (and so of ``codegen.BlockCodegen``)."""

    def _wm(self) -> str:
        self.kc.ns.setdefault("wm", warp_matrix)
        return "wm"

    def _read_regs(self, regs: list, reg_bytes: int) -> str:
        t = "u64" if reg_bytes == 8 else "u32"
        return "(" + "".join(f"{self.src(r, t)}, " for r in regs) + ")"

    def _write_regs(self, regs: list, result: str, reg_bytes: int) -> None:
        t = "u64" if reg_bytes == 8 else "u32"
        for k, r in enumerate(regs):
            self.assign(r, f"{result}[{k}]", t)

    def _check_count(self, ins: Instr, regs: list, frag, what: str) -> None:
        if len(regs) != frag.nregs:
            raise not_supported(f"`{_form(ins)}` with {len(regs)} {what} registers (the form takes {frag.nregs})")

    # ---- wmma --------------------------------------------------------------------------------
    def op_wmma(self, ins: Instr, idx: int) -> None:
        kind = ins.mods[0]
        shape = next((m for m in ins.mods if m[0] == "m" and "n" in m and "k" in m), None)
        types = [m for m in ins.mods if m in _WMMA_TYPES]
        if shape is None or not types or kind not in ("load", "store", "mma"):
            raise not_supported(f"wmma form `{_form(ins)}`")
        if kind == "mma":
            self._wmma_mma(ins, shape, types)
        else:
            self._wmma_memory(ins, idx, kind, shape, types[-1])

    def _wmma_memory(self, ins: Instr, idx: int, kind: str, shape: str, etype: str) -> None:
        which = ins.mods[1]
        if which not in ("a", "b", "c", "d") or (kind == "store") != (which == "d"):
            raise not_supported(f"wmma form `{_form(ins)}`")
        col_major = "col" in ins.mods
        if kind == "load":
            regs, addr_o = _items(ins.operands[0]), ins.operands[1]
        else:
            addr_o, regs = ins.operands[0], _items(ins.operands[1])
        rows, cols = wmma_matrix(shape, which)
        frag = wmma_fragment(rows, cols, etype, len(regs), col_major)
        access = warp_matrix.WmmaMemory(frag, col_major)
        op = self.kc.bind(access, "wmem")
        space, addr = self.address(addr_o, self.mem_space(ins))
        if space not in ("global", "shared", "generic"):
            raise not_supported(f"`{_form(ins)}` on .{space} memory")
        stride = self.src(ins.operands[2], "u32") if len(ins.operands) > 2 else \
            self.kc.const(access.default_stride(), "u32")
        self.at(idx)
        mask = self.mask_expr()
        if kind == "load":
            r = self.new_tmp()
            self.emit(f"{r} = {op}.load(X, L, {mask}, {space!r}, {addr}, {stride})")
            self._write_regs(regs, r, frag.reg_bytes)
        else:
            vals = self._read_regs(regs, frag.reg_bytes)
            self.emit(f"{op}.store(X, L, {mask}, {space!r}, {addr}, {stride}, {vals})")

    def _wmma_mma(self, ins: Instr, shape: str, types: list[str]) -> None:
        if len(types) == 2:                    # .dtype.ctype with .f16 multiplicands
            dtype, ctype = types
            atype = btype = "f16"
        elif len(types) == 4:
            dtype, atype, btype, ctype = types
        else:
            raise not_supported(f"wmma form `{_form(ins)}`")
        d, a, b, c = (_items(o) for o in ins.operands)
        alayout, blayout = [m for m in ins.mods if m in ("row", "col")][:2]
        frags = []
        for which, etype, regs, col in (("a", atype, a, alayout == "col"), ("b", btype, b, blayout == "col"),
                                        ("c", ctype, c, False), ("d", dtype, d, False)):
            rows, cols = wmma_matrix(shape, which)
            frags.append(wmma_fragment(rows, cols, etype, len(regs), col))
        self._mma_call(ins, frags, d, a, b, c)

    def _mma_call(self, ins: Instr, frags: list, d: list, a: list, b: list, c: list, groups: int = 1) -> None:
        fa, fb, fc, fd = frags
        if fa.etype == "b1" and "popc" not in ins.mods:
            raise not_supported(f"mma form `{_form(ins)}` (.b1 takes .and.popc or .xor.popc)")
        op = self.kc.bind(warp_matrix.MmaOp(_form(ins), fa, fb, fc, fd, "satfinite" in ins.mods,
                                            "xor" in ins.mods, groups), "mma")
        r = self.new_tmp()
        self.emit(f"{r} = {op}(X, L, {self._read_regs(a, fa.reg_bytes)}, {self._read_regs(b, fb.reg_bytes)}, "
                  f"{self._read_regs(c, fc.reg_bytes)})")
        self._write_regs(d, r, fd.reg_bytes)

    # ---- mma.sync ----------------------------------------------------------------------------
    def op_mma(self, ins: Instr, idx: int) -> None:
        shape = next((m for m in ins.mods if m in _MMA_SHAPES), None)
        types = [m for m in ins.mods if m in ELEMENT_BITS]
        if shape == "m8n8k4" and types[1:3] == ["f16", "f16"] and "sync" in ins.mods:
            return self._mma_quad_pairs(ins, types)
        if shape is None or len(types) != 4 or "sync" not in ins.mods or "row" not in ins.mods:
            raise not_supported(f"mma form `{_form(ins)}`")
        dtype, atype, btype, ctype = types
        fp8 = ("e4m3", "e5m2")
        if not ((atype in _INTEGER and btype in _INTEGER and atype[1] == btype[1]) or atype == btype
                or (atype in fp8 and btype in fp8)):
            raise not_supported(f"mma form `{_form(ins)}`")
        frags = mma_fragments(shape, atype, btype, ctype, dtype)
        self._mma_sync_call(ins, frags)

    def _mma_quad_pairs(self, ins: Instr, types: list[str]) -> None:
        """The sm_70 ``mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype``: four products."""
        layouts = [m for m in ins.mods if m in ("row", "col")]
        dtype, ctype = types[0], types[3]
        if len(types) != 4 or len(layouts) != 2 or {dtype, ctype} - {"f16", "f32"} or "satfinite" in ins.mods:
            raise not_supported(f"mma form `{_form(ins)}`")
        frags = quad_pair_fragments(layouts[0] == "col", layouts[1] == "col", ctype, dtype)
        self._mma_sync_call(ins, frags, groups=4)

    def _mma_sync_call(self, ins: Instr, frags: tuple, groups: int = 1) -> None:
        d, a, b, c = (_items(o) for o in ins.operands)
        for regs, frag, what in ((a, frags[0], "A"), (b, frags[1], "B"), (c, frags[2], "C"), (d, frags[3], "D")):
            self._check_count(ins, regs, frag, what)
        self._mma_call(ins, list(frags), d, a, b, c, groups)

    # ---- ldmatrix / stmatrix / movmatrix -----------------------------------------------------
    def _matrix8(self, ins: Instr, regs_at: int) -> tuple[int, bool, list, str, str]:
        """(count, .trans, registers, space, address) of ldmatrix/stmatrix ``.m8n8.x{count}.b16``."""
        num = next((int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")), None)
        if num is None or "m8n8" not in ins.mods or "b16" not in ins.mods:
            raise not_supported(f"`{_form(ins)}` (the emulator has the .m8n8 .b16 forms)")
        regs = _items(ins.operands[regs_at])
        if len(regs) != num:
            raise not_supported(f"`{_form(ins)}` with {len(regs)} registers for {num} matrices")
        space, addr = self.address(ins.operands[1 - regs_at], self.mem_space(ins))
        return num, "trans" in ins.mods, regs, space, addr

    def op_ldmatrix(self, ins: Instr, idx: int) -> None:
        num, trans, regs, space, addr = self._matrix8(ins, 0)
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = {self._wm()}.ldmatrix(X, L, {self.mask_expr()}, {space!r}, {addr}, {num}, {trans})")
        self._write_regs(regs, r, 4)

    def op_stmatrix(self, ins: Instr, idx: int) -> None:
        num, trans, regs, space, addr = self._matrix8(ins, 1)
        self.at(idx)
        self.emit(f"{self._wm()}.stmatrix(X, L, {self.mask_expr()}, {space!r}, {addr}, {num}, {trans}, "
                  f"{self._read_regs(regs, 4)})")

    def op_movmatrix(self, ins: Instr, idx: int) -> None:
        if "trans" not in ins.mods or "m8n8" not in ins.mods or "b16" not in ins.mods:
            raise not_supported(f"`{_form(ins)}`")
        self.at(idx)
        a = self.src(ins.operands[1], "u32")
        self.assign(ins.operands[0], f"{self._wm()}.movmatrix(X, L, {a})", "u32")

    # ---- cvt to tf32 -------------------------------------------------------------------------
    def cvt_tf32(self, ins: Instr) -> None:
        """cvt.{rna,rn,rz}.tf32.f32 d, a: round to tf32, kept in a .b32 register (low 13 bits zero)."""
        mode = next((m for m in ins.mods if m in ("rna", "rn", "rz")), None)
        extra = [m for m in ins.mods if m in ("satfinite", "relu")]
        if mode is None or extra:
            raise not_supported(f"cvt form `{_form(ins)}`")
        a = self.src(ins.operands[1], "u32")
        self.assign(ins.operands[0], f"{self._wm()}.round_tf32({a}, {mode!r})", "u32")
