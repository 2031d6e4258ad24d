# cython: language_level=3, boundscheck=False, wraparound=False
"""The blocking RPC call in C: the call header written into a cached prefix, one gathering send,
the poll for the reply, the reads with record reassembly, the reply header check, and the result
bytes handed back, with no Python frame on the way and without the GIL while the thread waits.
Interface: ``cricket/_cext/rpc_call.pxd``; pure-Python twin (same API, documented there):
``cricket/rpc/rpc_call.py``. Only plain sockets come here (TLS takes the twin); the rare paths
(a send that does not fit the socket, replies for other threads, errors) call back into the
client (``cricket/rpc/client.py``), so each is written once.
"""
import os
import weakref

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject
from cpython.weakref cimport PyWeakref_GetObject
from libc.errno cimport EAGAIN, EINTR, errno
from libc.stdint cimport uint32_t
from libc.string cimport memcmp, memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from posix.uio cimport iovec

from cricket._cext.record cimport RecordReader
from cricket._cext.socket_poll cimport poll_fd

import socket

from cricket.rpc.errors import RecordTooLarge, RpcConnectionError, RpcError

cdef extern from "<sys/socket.h>" nogil:
    cdef struct msghdr:
        iovec *msg_iov
        size_t msg_iovlen
    ssize_t sendmsg(int fd, const msghdr *msg, int flags)
    ssize_t recv(int fd, void *buf, size_t n, int flags)
    enum:
        MSG_NOSIGNAL
        MSG_DONTWAIT

cdef enum:
    IOV_MAX = 64            # pieces per gathering write, as the twin
    DIRECT_RECV = 65536     # a reply with at least this much still to come is received in place
    HEAD_ROOM = 1024        # size of CallPath._head

cdef uint32_t LAST = 0x80000000u
cdef uint32_t MAXFRAG = 0x7FFFFFFFu
# A reply's bytes 4-24 when it succeeded with an AUTH_NONE verifier: REPLY, MSG_ACCEPTED, flavor 0,
# length 0, SUCCESS.
cdef bytes _SUCCESS_NONE_TAIL = b"\0\0\0\1" + b"\0" * 16
cdef const unsigned char *SUCCESS_TAIL = <const unsigned char *>PyBytes_AS_STRING(_SUCCESS_NONE_TAIL)
cdef object _socket_type = socket.socket


cdef inline uint32_t _load(const unsigned char *p) noexcept nogil:
    return ((<uint32_t>p[0]) << 24) | ((<uint32_t>p[1]) << 16) | ((<uint32_t>p[2]) << 8) | p[3]


cdef inline void _store(unsigned char *p, uint32_t v) noexcept nogil:
    p[0] = (v >> 24) & 0xFF
    p[1] = (v >> 16) & 0xFF
    p[2] = (v >> 8) & 0xFF
    p[3] = v & 0xFF


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline bint _in_record(RecordReader reader):
    return reader._hdr_len > 0 or not reader._in_header or len(reader._parts) > 0


cdef class CallPath:
    """See the twin, ``cricket.rpc.rpc_call.CallPath``."""

    def __init__(self, client, sock, RecordReader reader, bytearray rbuf, bytes auth,
                 bint plain, double spin, bint yield_cpu):
        if type(sock) is not _socket_type:
            raise TypeError("the compiled call path takes plain sockets only (TLS takes the twin)")
        if len(auth) > HEAD_ROOM - 28:
            raise ValueError(f"credential and verifier of {len(auth)} bytes exceed {HEAD_ROOM - 28}")
        self._client = weakref.ref(client)     # no cycle: a dropped client closes its socket
        self._sock = sock
        self._fd = sock.fileno()
        self._reader = reader
        self._rbuf = rbuf       # never resized: the client holds a view of it
        self._auth = auth
        memset(self._head, 0, 28)
        _store(self._head + 12, 2)          # RPC version; the message type CALL is 0
        memcpy(self._head + 28, PyBytes_AS_STRING(auth), len(auth))
        self._head_size = 24 + len(auth)
        self._acquire = client._send_lock.acquire
        self._release = client._send_lock.release
        self._lock_acquire = client._lock.acquire
        self._lock_release = client._lock.release
        self._xids = client._xids
        self.plain = plain
        self.spin = spin
        self.yield_cpu = yield_cpu
        self.reading = False
        self.sleepers = 0

    cdef object _owner(self):
        """The client (held weakly)."""
        cdef PyObject *client = PyWeakref_GetObject(self._client)
        if <object>client is None:
            raise RpcConnectionError("the RPC client this call path served is gone")
        return <object>client

    cpdef object call(self, unsigned int prog, unsigned int vers, unsigned int proc,
                      object buffers):
        cdef object client = self._owner()
        cdef object timeout
        cdef unsigned int xid
        if len(buffers) >= IOV_MAX:
            return None
        self._lock_acquire()
        try:
            if self.reading:
                return None
            self.reading = True
        finally:
            self._lock_release()
        try:
            timeout = client._timeout_s
            if client._rcvtimeo != timeout:
                client._set_rcvtimeo(timeout)
            xid = next(self._xids) & 0xFFFFFFFF
            return self._exchange(xid, prog, vers, proc, buffers,
                                  -1.0 if timeout is None else timeout)
        finally:
            self._lock_acquire()
            try:
                self.reading = False
                if self.sleepers:
                    client._cond.notify_all()
            finally:
                self._lock_release()

    cdef object _exchange(self, unsigned int xid, unsigned int prog, unsigned int vers,
                          unsigned int proc, object buffers, double timeout):
        """Send the call, then receive its reply (this thread holds the reader role)."""
        cdef Py_buffer views[IOV_MAX]
        cdef iovec iov[IOV_MAX]
        cdef msghdr msg
        cdef Py_ssize_t size = self._head_size, sent = 0, got = 0, j
        cdef int err = 0
        try:
            for b in buffers:
                if got >= IOV_MAX - 1:
                    return None
                PyObject_GetBuffer(b, &views[got], PyBUF_SIMPLE)
                got += 1
                iov[got].iov_base = views[got - 1].buf
                iov[got].iov_len = views[got - 1].len
                size += views[got - 1].len
            if size > MAXFRAG:
                raise RpcError(f"a call of {size} bytes does not fit one record fragment")
            _store(self._head, LAST | <uint32_t>size)
            _store(self._head + 4, xid)
            _store(self._head + 16, prog)
            _store(self._head + 20, vers)
            _store(self._head + 24, proc)
            iov[0].iov_base = self._head
            iov[0].iov_len = self._head_size + 4
            memset(&msg, 0, sizeof(msg))
            msg.msg_iov = iov
            msg.msg_iovlen = got + 1
            self._acquire()
            try:
                with nogil:
                    sent = sendmsg(self._fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)
                    err = errno
                if sent != size + 4:
                    self._send_rest(sent, err, buffers)
            finally:
                self._release()
        finally:
            for j in range(got):
                PyBuffer_Release(&views[j])
        return self.receive(xid, timeout)

    cdef _send_rest(self, Py_ssize_t sent, int err, object buffers):
        """The socket took part of the call (or none): the client sends the rest as it drains."""
        if sent < 0:
            if err != EAGAIN and err != EINTR:
                raise self._owner()._send_failed(OSError(err, os.strerror(err)))
            sent = 0
        pieces = [PyBytes_FromStringAndSize(<char *>self._head, self._head_size + 4)]
        pieces.extend(buffers)
        self._owner()._write_rest(pieces, sent, True)

    cpdef object receive(self, unsigned int xid, double timeout):
        cdef RecordReader reader = self._reader
        cdef unsigned char *rbuf = <unsigned char *>PyByteArray_AS_STRING(self._rbuf)
        cdef unsigned char *buf
        cdef Py_ssize_t cap = PyByteArray_GET_SIZE(self._rbuf), want, n
        cdef uint32_t h
        cdef bint direct, first = True
        cdef int err
        cdef double deadline = _now() + timeout if timeout >= 0 else -1.0
        cdef double remaining
        cdef list records
        cdef bytes rec
        while True:
            if self.spin > 0 and (first or _in_record(reader)):
                # Also for the rest of a record that came in part: it is on its way.
                with nogil:
                    poll_fd(self._fd, self.spin, self.yield_cpu)
            first = False
            direct = reader._rec is not None and reader._frag_left >= DIRECT_RECV
            if direct:
                buf = <unsigned char *>PyBytes_AS_STRING(reader._rec) + reader._fill
                want = reader._frag_left
            else:
                buf = rbuf
                want = cap
            with nogil:
                n = recv(self._fd, buf, want, 0)
                err = errno
            if n > 0:
                if direct:
                    records = reader.advance(n)
                else:
                    if n >= 28 and self.plain and not _in_record(reader):
                        # The common case: exactly our reply, one fragment, SUCCESS: only its
                        # result is copied out.
                        h = _load(rbuf)
                        if (h == (LAST | <uint32_t>(n - 4)) and n - 4 <= reader._max
                                and _load(rbuf + 4) == xid
                                and memcmp(rbuf + 8, SUCCESS_TAIL, 20) == 0):
                            return memoryview(PyBytes_FromStringAndSize(<char *>rbuf + 28, n - 28))
                    try:
                        records = reader._feed(rbuf, n)
                    except RecordTooLarge as exc:
                        raise self._owner()._fail(exc) from None
                if records:
                    rec = records[0]
                    if not (len(records) == 1 and PyBytes_GET_SIZE(rec) >= 4
                            and _load(<unsigned char *>PyBytes_AS_STRING(rec)) == xid):
                        rec = self._owner()._hand_over(records, xid)
                    if rec is not None:
                        return self._result(rec)
            elif n == 0:
                self._owner()._lost()
            elif err == EINTR:
                PyErr_CheckSignals()
            elif err != EAGAIN:
                raise self._owner()._read_failed(OSError(err, os.strerror(err)))
            if deadline >= 0:
                remaining = deadline - _now()
                if remaining <= 0:
                    raise self._owner()._timeout(timeout)
                if remaining < self._owner()._rcvtimeo:
                    self._owner()._set_rcvtimeo(remaining)

    cdef object _result(self, bytes record):
        if (self.plain and PyBytes_GET_SIZE(record) >= 24
                and memcmp(PyBytes_AS_STRING(record) + 4, SUCCESS_TAIL, 20) == 0):
            return memoryview(record)[24:]
        return self._owner()._result(record)
