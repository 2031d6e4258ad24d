# cython: language_level=3, boundscheck=False, wraparound=False
"""One call record of the RPC server in C, from the bytes the event loop read to the reply handed
to the transport: record reassembly (``RecordReader._feed``), the call header's checks, the
procedure's entry, the argument decoder, the call context, the handler, the result encoder, the
reply header and record mark, and the write. Python frames are left only where the program's
code runs (its decoder, handler and encoder, when they are Python).

The functions are the connection's methods (``cricket.rpc.server._Connection``); the rare paths
are the connection's own methods, called from here. Pure-Python twin, same API and behaviour:
``cricket/rpc/dispatch.py``. See ``docs/rpc-dispatch.md``.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport PyObject
from libc.stdint cimport uint32_t
from libc.string cimport memset

from cricket._cext.record cimport RecordReader
from xdr_buffer cimport R, W, _w_flush, _w_free, _w_init, _w_room
from xdr_procedure cimport PROCEDURE_CODEC, ProcedureCodec

from cricket.rpc.context import NO_REPLY, _current
from cricket.rpc.errors import RecordTooLarge
from cricket.rpc.sink import SINK_MIN
from cricket.xdr import Packer, Unpacker, XdrError

SINK_HEAD = 4 + 40
SMALL_REPLY = 16384
cdef object _GARBAGE = object()     # what _args_of answers for arguments it could not decode
DECODE_ERRORS = (XdrError, ValueError, IndexError, TypeError, OverflowError, EOFError)

cdef extern from *:
    """
    static inline uint32_t cricket_dsp_get32(const unsigned char *p) {
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    }
    static inline void cricket_dsp_put32(char *p, uint32_t v) {
        p[0] = (char)(v >> 24); p[1] = (char)(v >> 16); p[2] = (char)(v >> 8); p[3] = (char)v;
    }
    /* A call (message type 0) of RPC version 2 with AUTH_NONE credential and verifier, both empty. */
    static inline int cricket_dsp_none_call(const unsigned char *p) {
        static const unsigned char zero[16] = {0};
        return cricket_dsp_get32(p + 4) == 0 && cricket_dsp_get32(p + 8) == 2
               && memcmp(p + 24, zero, 16) == 0;
    }
    /* Results of this type must be awaited (a coroutine, or a class with __await__). */
    static inline int cricket_dsp_awaitable(PyObject *o) {
        PyAsyncMethods *a = Py_TYPE(o)->tp_as_async;
        return a != NULL && a->am_await != NULL;
    }
    """
    uint32_t get32 "cricket_dsp_get32"(const unsigned char *p) noexcept
    void put32 "cricket_dsp_put32"(char *p, uint32_t v) noexcept
    bint none_call "cricket_dsp_none_call"(const unsigned char *p) noexcept
    bint awaitable "cricket_dsp_awaitable"(PyObject *o) noexcept

cdef uint32_t LAST = 0x80000000u
cdef uint32_t MAXFRAG = 0x7FFFFFFFu
cdef Py_ssize_t CALL_HEAD = 40           # xid .. verifier of an AUTH_NONE call
cdef Py_ssize_t REPLY_HEAD = 28          # record mark + a SUCCESS reply header with AUTH_NONE
cdef enum:
    REPLY_STACK = 2048                   # a compiled codec's reply starts in this stack buffer


cdef class Entry:
    """One procedure of one served version, resolved at registration."""

    cdef readonly object proc
    cdef readonly object method
    cdef readonly object number
    cdef readonly object name
    cdef readonly object decode_args
    cdef readonly object encode_result
    cdef const ProcedureCodec *codec    # the compiled steps of a generated codec, or NULL

    def __init__(self, proc, method):
        self.proc = proc
        self.method = method
        self.number = proc.number
        self.name = proc.name
        self.decode_args = proc.decode_args
        self.encode_result = proc.encode_result
        capsule = getattr(proc, "codec", None)
        if capsule is not None:
            self.codec = <const ProcedureCodec *>PyCapsule_GetPointer(capsule, PROCEDURE_CODEC)


cdef class _ReplySink:
    """The sink of a compiled result encoder: takes large opaques uncopied, in a ``Packer`` made
    on first use (a small reply never makes one). One per connection, used within one reply."""
    cdef object packer

    cdef object _p(self):
        if self.packer is None:
            self.packer = Packer()
        return self.packer

    def pack_raw(self, data) -> None:
        self._p().pack_raw(data)

    def pack_opaque(self, data) -> None:
        self._p().pack_opaque(data)


cdef class ConnectionState:
    """What a record's common path reads of a connection, as C fields: the connection's own
    (set by the connection's code too), and the server's tables, taken once."""

    cdef public object server
    cdef public object reader
    cdef public object transport
    cdef public object queue
    cdef public object _rview
    cdef public object _none_auth
    cdef public object _receiving
    cdef public object _out
    cdef public bint busy
    cdef public bint held
    cdef public bint closed
    cdef public bint refused
    cdef public bint _direct
    cdef readonly dict programs
    cdef readonly dict sinks
    cdef readonly object builtin_null
    cdef readonly double poll
    cdef readonly Py_ssize_t max_fragment
    cdef _ReplySink _sink
    cdef uint32_t _last_prog, _last_vers, _last_proc   # the last procedure an AUTH_NONE call
    cdef Entry _last_entry                             # named, and its entry

    def __init__(self, server):
        self.server = server
        self.programs = server._programs
        self.sinks = server._sinks
        self.builtin_null = server._builtin_null
        self.poll = server.poll
        self.max_fragment = server.max_fragment
        self._sink = _ReplySink()


cdef bytes _reply_head(uint32_t xid, uint32_t mark):
    """Record mark (or its placeholder) and a SUCCESS/AUTH_NONE reply header for ``xid``."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, REPLY_HEAD)
    cdef char *p = PyBytes_AS_STRING(out)
    memset(p, 0, REPLY_HEAD)
    put32(p, mark)
    put32(p + 4, xid)
    put32(p + 8, 1)
    return out


cdef inline void _write_small(ConnectionState conn, bytes piece) except *:
    if conn._out is not None:
        (<list>conn._out).append(piece)
    elif not conn.closed:
        conn.transport.write(piece)


cdef bint _sink_candidate(const unsigned char *p, Py_ssize_t n):
    """Whether the bytes may start a call a payload sink takes (the connection decides)."""
    cdef uint32_t head
    if n < SINK_HEAD:
        return False
    head = get32(p)
    return (head & LAST) != 0 and <Py_ssize_t>(head & MAXFRAG) >= SINK_MIN


def buffer_updated(ConnectionState conn, Py_ssize_t nbytes):
    """``nbytes`` arrived in the buffer the connection handed out last."""
    cdef Py_buffer view
    cdef list records
    cdef bint sink
    if conn.poll:
        conn.server._keep_polling()
    if conn._receiving is not None or conn._direct:
        conn._filled_in_place(nbytes)
        return
    rview = conn._rview
    reader = conn.reader
    if type(reader) is not RecordReader:
        data_received(conn, rview[:nbytes])
        return
    PyObject_GetBuffer(rview, &view, PyBUF_SIMPLE)
    try:
        if nbytes < 0 or nbytes > view.len:
            raise ValueError(f"buffer_updated({nbytes}) past the {view.len}-byte read buffer")
        sink = conn.sinks and _sink_candidate(<const unsigned char *>view.buf, nbytes)
        if not sink:
            records = (<RecordReader>reader)._feed(<const unsigned char *>view.buf, nbytes)
    except RecordTooLarge as exc:
        conn._record_too_large(exc)
        return
    finally:
        PyBuffer_Release(&view)
    if sink:
        data = rview[:nbytes]
        if reader.in_record or not conn._offer_sink(data):
            data_received(conn, data)
        return
    if records:
        _answer(conn, records)


def data_received(ConnectionState conn, data):
    """Reassemble records from ``data`` and answer those complete (bytes that did not come
    through :func:`buffer_updated`: rare)."""
    records = conn._feed(data)
    if records:
        _answer(conn, records)


cdef _answer(ConnectionState conn, list records):
    if len(records) == 1 and not (conn.busy or conn.held or conn.queue or conn.refused):
        _handle(conn, records[0])
    else:
        conn._deliver(records)


def handle(ConnectionState conn, record):
    """Answer one call record (or close the connection when its header is unreadable)."""
    _handle(conn, record if type(record) is bytes else bytes(record))


cdef _handle(ConnectionState conn, bytes record):
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(record)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(record)
    cdef uint32_t cxid, cprog, cvers, cproc
    cdef Entry entry = None
    cdef bint pending
    none_auth = conn._none_auth
    if none_auth is not None and n >= CALL_HEAD and none_call(p):
        cxid, cprog, cvers, cproc = get32(p), get32(p + 12), get32(p + 16), get32(p + 20)
        # A connection calls the same procedure again and again: its last entry is kept (a
        # server's tables only ever gain programs; an entry found stays its procedure's entry).
        if (conn._last_entry is not None and cproc == conn._last_proc and cprog == conn._last_prog
                and cvers == conn._last_vers):
            entry = conn._last_entry
        prog, vers, proc = cprog, cvers, cproc
        if entry is None:
            key = (prog, vers)
            if cproc == 0 and key in conn.builtin_null:
                _write_small(conn, _reply_head(cxid, LAST | (REPLY_HEAD - 4)))
                return
            entry = _entry_of(conn, cxid, key, proc)
            if entry is None:
                return
            conn._last_prog, conn._last_vers, conn._last_proc, conn._last_entry = cprog, cvers, cproc, entry
        xid = cxid
        cred_flavor, cred_body, authenticator, credentials, offset = 0, b"", none_auth, None, CALL_HEAD
    else:
        decoded = conn._handle_decoded(record)
        if decoded is None:
            return
        xid, prog, vers, proc, cred_flavor, cred_body, authenticator, credentials, offset = decoded
        entry = _entry_of(conn, xid, (prog, vers), proc)
        if entry is None:
            return
    args = _args_of(conn, xid, entry, record, offset)
    if args is _GARBAGE:
        return
    token = PyContextVar_Set(_current, (conn, xid, prog, vers, proc, cred_flavor, cred_body,
                                        credentials))
    try:
        result = entry.method(*args)
        pending = awaitable(<PyObject *>result)
        if pending:     # the reply comes when it is done; the task copies the context set here
            conn._await_result(xid, entry, authenticator, credentials, result)
    except Exception as exc:
        conn._handler_failed(xid, entry, exc)
        return
    finally:
        PyContextVar_Reset(_current, token)
    if not pending:
        _reply(conn, xid, entry, authenticator, credentials, result)


cdef Entry _entry_of(ConnectionState conn, xid, tuple key, proc):
    """The entry of a served procedure, or None when the call was answered here (not served)."""
    table = conn.programs.get(key)
    found = None if table is None else (<dict>table).get(proc)
    if found is not None and (<Entry>found).method is not None:
        return <Entry>found
    conn._no_procedure(xid, key[0], key[1], proc)
    return None


cdef object _args_of(ConnectionState conn, xid, Entry entry, bytes record, Py_ssize_t offset):
    """The call's arguments, or ``_GARBAGE`` when they could not be decoded (answered here)."""
    cdef R r
    try:
        if entry.codec == NULL:
            return entry.decode_args(Unpacker(record, offset))
        r.buf = <const unsigned char *>PyBytes_AS_STRING(record)
        r.pos = offset
        r.end = PyBytes_GET_SIZE(record)
        r.owner = <PyObject *>record
        return entry.codec.decode_args(&r)
    except DECODE_ERRORS as exc:
        conn._garbage_args(xid, entry, exc)
        return _GARBAGE


def reply(ConnectionState conn, xid, Entry entry, authenticator, credentials, result):
    """Encode ``result`` behind its reply header and record mark and write it (or collect it)."""
    _reply(conn, xid, entry, authenticator, credentials, result)


cdef _reply(ConnectionState conn, xid, Entry entry, authenticator, credentials, result):
    cdef Py_ssize_t size
    if result is NO_REPLY or conn.closed:
        return
    if entry.codec != NULL and authenticator is conn._none_auth:
        _reply_compiled(conn, xid, entry, result)
        return
    packer = Packer()
    if authenticator is conn._none_auth:
        packer.pack_raw(_reply_head(xid, 0))
    else:
        packer.pack_raw(conn._reply_head(xid, authenticator, credentials))
    try:
        entry.encode_result(packer, result)
        size = len(packer) - 4
    except Exception:
        conn._encode_failed(xid, entry)
        return
    if size > SMALL_REPLY or size > conn.max_fragment:
        conn._write_large(packer)
    else:
        _write_small(conn, packer.get_record())


cdef _reply_compiled(ConnectionState conn, xid, Entry entry, result):
    """The reply head and the result, encoded by the procedure's compiled codec into a stack
    buffer: one ``bytes`` for a small reply; a large opaque goes to the sink uncopied."""
    cdef W wb
    cdef W *w = &wb
    cdef char small[REPLY_STACK]
    cdef char *p
    cdef Py_ssize_t size
    cdef _ReplySink sink = conn._sink
    _w_init(w, small, REPLY_STACK, sink)
    try:
        p = _w_room(w, REPLY_HEAD)
        memset(p, 0, REPLY_HEAD)
        put32(p + 4, <uint32_t>xid)
        put32(p + 8, 1)
        w.n = REPLY_HEAD
        try:
            entry.codec.encode_result(w, result)
        except Exception:
            sink.packer = None
            conn._encode_failed(xid, entry)
            return
        if sink.packer is not None:     # a large opaque went to the sink: the Packer's path
            _w_flush(w)
            packer, sink.packer = sink.packer, None
            size = len(packer) - 4
        else:
            size = w.n - 4
            if size <= SMALL_REPLY and size <= conn.max_fragment:
                put32(w.buf, LAST | <uint32_t>size)
                _write_small(conn, PyBytes_FromStringAndSize(w.buf, w.n))
                return
            packer = Packer()
            packer.pack_raw(PyBytes_FromStringAndSize(w.buf, w.n))
    finally:
        _w_free(w)
    if size > SMALL_REPLY or size > conn.max_fragment:
        conn._write_large(packer)
    else:
        _write_small(conn, packer.get_record())
