"""Fixed layouts: the types of a .x whose encoding is a run of scalars at fixed byte offsets.

A struct of scalars (ints, hypers, floats, bools, enums, and structs of those) always encodes to
the same bytes at the same offsets; so does one whose last field is a variable-length opaque or
string, up to that field's bytes (its length word is the last scalar). A union arm selected by a
single case value is a fixed layout too when its field is: the discriminant is a constant.

Hot paths that write or read such records in one piece (a kernel launch, the head of a copy)
use the encoders the emitters make from these layouts (``pack_T_fixed`` / ``unpack_T_fixed`` in
Python, ``put_T_fixed`` / ``get_T_fixed`` in the Cython ``.pxd``) instead of offsets of their
own, so a change to the .x changes them or breaks their callers' build.
"""
from __future__ import annotations

from dataclasses import dataclass

from rpcgen import model

#: XDR scalar kinds by their bytes on the wire.
_SIZES = {"int": 4, "uint": 4, "enum": 4, "bool": 4, "float": 4, "hyper": 8, "uhyper": 8,
          "double": 8}


@dataclass(frozen=True)
class Slot:
    """One scalar of a fixed layout."""

    name: str           # flat name: ``grid_x`` for field ``grid``'s ``x``, ``params_len``
    path: str           # as the .x spells it: ``grid.x``, ``params`` (its length)
    kind: str           # int uint enum bool float hyper uhyper double
    offset: int
    value: int | None = None   # a union arm's discriminant: written as this constant

    @property
    def size(self) -> int:
        return _SIZES[self.kind]


@dataclass(frozen=True)
class FixedLayout:
    name: str                   # the struct, or ``<union>_<arm field>``
    what: str                   # for documentation: "struct cr_launch_args"
    slots: tuple[Slot, ...]
    tail: str | None = None     # the variable-length field after the slots (its length is the last slot)
    tail_max: int | None = None

    @property
    def size(self) -> int:
        last = self.slots[-1]
        return last.offset + last.size

    @property
    def arguments(self) -> tuple[Slot, ...]:
        """The slots a caller gives (constants are written by the encoder)."""
        return tuple(s for s in self.slots if s.value is None)


class _NotFixed(Exception):
    pass


def _scalars(mod: model.Module, t: model.TypeExpr, name: str, path: str, offset: int,
             active: frozenset) -> list[Slot]:
    t = mod.resolve(t)
    if isinstance(t, model.Prim):
        if t.kind not in _SIZES:
            raise _NotFixed
        return [Slot(name, path, t.kind, offset)]
    if isinstance(t, model.Ref) and t.name not in active:
        d = mod.types[t.name]
        if isinstance(d, model.Enum):
            return [Slot(name, path, "enum", offset)]
        if isinstance(d, model.Struct) and not d.is_list and d.fields:
            out: list[Slot] = []
            for f in d.fields:
                sub = _scalars(mod, f.type, f"{name}_{f.name}", f"{path}.{f.name}", offset,
                               active | {t.name})
                out += sub
                offset = sub[-1].offset + sub[-1].size
            return out
    raise _NotFixed


def _with_tail(mod: model.Module, fields: list[model.Field], offset: int, slots: list[Slot],
               active: frozenset) -> tuple[list[Slot], str | None, int | None]:
    tail = tail_max = None
    for i, f in enumerate(fields):
        t = mod.resolve(f.type)
        if i == len(fields) - 1 and isinstance(t, (model.VarOpaque, model.String)):
            slots.append(Slot(f"{f.name}_len", f.name, "uint", offset))
            tail, tail_max = f.name, t.max
            break
        sub = _scalars(mod, f.type, f.name, f.name, offset, active)
        slots += sub
        offset = sub[-1].offset + sub[-1].size
    return slots, tail, tail_max


def struct_layout(mod: model.Module, s: model.Struct) -> FixedLayout | None:
    if s.is_list or not s.fields:
        return None
    try:
        slots, tail, tail_max = _with_tail(mod, s.fields, 0, [], frozenset({s.name}))
    except _NotFixed:
        return None
    return FixedLayout(s.name, f"struct {s.name}", tuple(slots), tail, tail_max)


def union_arm_layouts(mod: model.Module, u: model.Union) -> list[FixedLayout]:
    out = []
    disc = mod.resolve(u.discriminant.type)
    kind = "enum" if isinstance(disc, model.Ref) else getattr(disc, "kind", "")
    if kind not in ("int", "uint", "enum", "bool"):
        return out
    for arm in u.arms:
        if arm.field is None or len(arm.values) != 1:
            continue
        name = f"{u.name}_{arm.field.name}"
        if name in mod.types:
            continue
        head = [Slot(u.discriminant.name, u.discriminant.name, kind, 0, arm.values[0])]
        try:
            slots, tail, tail_max = _with_tail(mod, [arm.field], 4, head, frozenset({u.name}))
        except _NotFixed:
            continue
        out.append(FixedLayout(name, f"union {u.name} with {u.discriminant.name} = {arm.values[0]}",
                               tuple(slots), tail, tail_max))
    return out


def fixed_layouts(mod: model.Module) -> list[FixedLayout]:
    """Every fixed layout of ``mod``, in the order of its types (one whose flat names collide,
    as field ``a_b`` beside field ``a`` of a struct with ``b``, is left out)."""
    out: list[FixedLayout] = []
    for t in mod.types.values():
        if isinstance(t, model.Struct):
            layout = struct_layout(mod, t)
            found = [layout] if layout is not None else []
        elif isinstance(t, model.Union):
            found = union_arm_layouts(mod, t)
        else:
            continue
        out += [x for x in found if len({s.name for s in x.slots}) == len(x.slots)]
    return out
