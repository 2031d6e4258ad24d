# cython: language_level=3
"""The compiled codec of one RPC procedure, as an rpcgen-generated codec hands it to the server.

A generated ``_<stem>_xdr`` module puts one ``ProcedureCodec`` per procedure into a capsule named
``PROCEDURE_CODEC`` (``Procedure.codec``); the server's record path (``cext/dispatch.pyx``)
decodes the arguments from its read cursor and encodes the result behind the reply header in its
write buffer with them, with no Python call. Both sides take ``W`` and ``R`` from
``xdr_buffer.pxd``, so they agree on the buffers' layout by construction.
"""
from xdr_buffer cimport W, R

cdef extern from *:
    """
    #define CRICKET_PROCEDURE_CODEC "cricket.xdr.ProcedureCodec"
    """
    const char *PROCEDURE_CODEC "CRICKET_PROCEDURE_CODEC"

# the arguments as a tuple (all of them, in order); NULL with an exception when they do not decode
ctypedef object (*ArgsDecoder)(R *r)
# the result appended to ``w``; -1 with an exception when it cannot be encoded
ctypedef int (*ResultEncoder)(W *w, object value) except -1

cdef struct ProcedureCodec:
    ArgsDecoder decode_args
    ResultEncoder encode_result
