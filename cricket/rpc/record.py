"""TCP record marking: the Cython ``cricket._cext.record`` or its pure-Python twin ``_record``."""
from __future__ import annotations

from cricket._select import load

_impl = load("cricket._cext.record", "cricket.rpc._record")

RecordReader = _impl.RecordReader
FillableBytes = _impl.FillableBytes
mark = _impl.mark
frame = _impl.frame
IMPLEMENTATION: str = _impl.__name__

__all__ = ["RecordReader", "FillableBytes", "mark", "frame", "IMPLEMENTATION"]
