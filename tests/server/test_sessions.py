"""Sessions and the procedures, in-process on the host-memory plugin backend (no kernels needed)."""
import hashlib

import pytest

from cricket.cudafacts import curesult
from cricket.backends.base import BackendError, ImageKind
from cricket.backends.registry import BackendRegistry
from cricket.server.service import NEED_IMAGE, PROTOCOL_VERSION, CricketService


@pytest.fixture
def service():
    reg = BackendRegistry()
    reg.load("plugin_backend:HostMemoryBackend")
    svc = CricketService(reg, token="t0k", admin_token="adm")
    yield svc
    for s in list(svc.sessions.values()):
        svc.close_session(s)
        s.worker.shutdown(wait=True)


def hello(svc, token="t0k"):
    s = svc.open_session("test")
    svc.hello(s, PROTOCOL_VERSION, "pytest", token, "")
    return s


def code_of(fn, *args):
    with pytest.raises(BackendError) as info:
        fn(*args)
    return info.value.code


def test_calls_before_hello_are_refused(service):
    s = service.open_session()
    assert code_of(service.mem_alloc, s, 16) == curesult.NOT_INITIALIZED


def test_wrong_token_is_refused_and_right_one_returns_the_devices(service):
    s = service.open_session()
    assert code_of(service.hello, s, PROTOCOL_VERSION, "x", "bad", "") == curesult.NOT_PERMITTED
    h = service.hello(s, PROTOCOL_VERSION, "x", "t0k", "")
    assert h.backend == "hostmem" and h.devices[0].name == "host memory"
    assert code_of(service.hello, service.open_session(), 99, "x", "t0k", "") == curesult.NOT_SUPPORTED


def test_memory_of_one_session_is_invisible_to_another(service):
    a, b = hello(service), hello(service)
    ptr = service.mem_alloc(a, 64)
    service.memcpy_htod(a, ptr, 0, b"secret" * 4)
    assert code_of(service.memcpy_dtoh, b, ptr, 8, 0) == curesult.INVALID_VALUE
    assert code_of(service.memcpy_htod, b, ptr, 0, b"x") == curesult.INVALID_VALUE
    assert code_of(service.mem_free, b, ptr) == curesult.INVALID_VALUE
    assert service.memcpy_dtoh(a, ptr + 6, 6, 0) == b"secret"


def test_copies_past_the_end_of_an_allocation_are_refused(service):
    a = hello(service)
    ptr = service.mem_alloc(a, 16)
    assert code_of(service.memcpy_htod, a, ptr + 8, 0, b"x" * 9) == curesult.INVALID_VALUE
    service.memcpy_htod(a, ptr + 8, 0, b"x" * 8)


def test_handles_of_another_session_are_invalid(service):
    a, b = hello(service), hello(service)
    stream = service.stream_create(a, 0)
    event = service.event_create(a, 0)
    assert code_of(service.stream_synchronize, b, stream) == curesult.INVALID_HANDLE
    assert code_of(service.event_record, b, event, 0) == curesult.INVALID_HANDLE
    assert code_of(service.stream_destroy, b, stream) == curesult.INVALID_HANDLE
    service.event_record(a, event, stream)
    service.stream_destroy(a, stream)


def test_asynchronous_error_is_reported_once_by_the_next_synchronising_call(service):
    a = hello(service)
    a.keep_async_error(BackendError(curesult.ILLEGAL_ADDRESS, "kernel k read out of bounds"))
    a.keep_async_error(BackendError(curesult.LAUNCH_FAILED, "a later one is not kept"))
    assert code_of(service.ctx_synchronize, a) == curesult.ILLEGAL_ADDRESS
    service.ctx_synchronize(a)


def test_module_image_is_sent_once_and_found_by_hash_afterwards(service):
    a, b = hello(service), hello(service)
    image = b"\0.entry vadd\0" * 10
    digest = hashlib.sha256(image).digest()
    assert code_of(service.module_load, a, digest, ImageKind.PTX, b"") == NEED_IMAGE
    ha = service.module_load(a, digest, ImageKind.PTX, image).handle
    hb = service.module_load(b, digest, ImageKind.PTX, b"").handle   # hit: no bytes sent
    assert ha != hb and service.images.hits == 1
    fn = service.module_get_function(b, hb, "vadd")
    assert code_of(service.module_get_function, a, hb, "vadd") == curesult.INVALID_HANDLE
    assert code_of(service.launch, b, fn.handle, (1, 1, 1), (1, 1, 1), 0, 0, b"") == curesult.NOT_SUPPORTED


def test_image_that_does_not_match_its_hash_is_refused(service):
    a = hello(service)
    assert code_of(service.module_load, a, b"\0" * 32, ImageKind.PTX, b"abc") == curesult.INVALID_VALUE


def test_closing_a_session_frees_everything_it_owned(service):
    a = hello(service)
    dev = a.device
    ptrs = [service.mem_alloc(a, 1024) for _ in range(3)]
    service.stream_create(a, 0)
    service.event_create(a, 0)
    assert service.server_stats()["allocations"] == 3
    service.close_session(a)
    a.worker.shutdown(wait=True)
    assert sorted(dev.freed) == sorted(ptrs)
    stats = service.server_stats()
    assert stats["sessions"] == 0 and stats["allocations"] == 0


def test_load_backend_needs_the_admin_token(service):
    user = hello(service)
    assert code_of(service.load_backend, user, "plugin_backend:HostMemoryBackend", "") == curesult.NOT_PERMITTED
    admin = hello(service, token="adm")
    with pytest.raises(BackendError, match="--allow-backend-import"):
        service.load_backend(admin, "plugin_backend:HostMemoryBackend", "")
    service.allow_backend_import = True
    with pytest.raises(BackendError, match="already loaded"):
        service.load_backend(admin, "plugin_backend:HostMemoryBackend", "")


def test_whether_an_image_prints_is_kept_with_it_until_it_is_evicted():
    from cricket.server.images import ImageCache, image_hash
    cache = ImageCache(max_bytes=8)
    first, second = b"1234", b"56789"
    cache.put(image_hash(first), ImageKind.PTX, first)
    assert cache.calls_printf(image_hash(first)) is None          # no backend said yet
    cache.note_calls_printf(image_hash(first), True)
    assert cache.calls_printf(image_hash(first)) is True
    cache.put(image_hash(second), ImageKind.PTX, second)          # 9 bytes: the first goes
    assert cache.get(image_hash(first)) is None and cache.calls_printf(image_hash(first)) is None
    cache.note_calls_printf(image_hash(first), False)             # not held: not kept either
    assert cache.calls_printf(image_hash(first)) is None
