"""Module images by content hash, shared by all sessions, so a client that offers a known hash sends
no bytes. Each session still loads its own module instance (its ``__device__`` variables are its
own); only the bytes are shared. Bounded by bytes, least recently used first out; one image is
bounded by ``max_image`` (``--max-image``), and only an image that loaded is kept."""
from __future__ import annotations

import collections
import hashlib
import logging
import threading

from ..cudafacts import curesult
from ..backends.base import BackendError, ImageKind
from .limits import DEFAULT_MAX_IMAGE

log = logging.getLogger(__name__)


def image_hash(image: bytes | memoryview) -> bytes:
    """The content hash the protocol uses (SHA-256)."""
    return hashlib.sha256(image).digest()


class ImageCache:
    """hash → (kind, image bytes), least recently used evicted past ``max_bytes``."""

    def __init__(self, max_bytes: int = 1 << 30, max_image: int = DEFAULT_MAX_IMAGE) -> None:
        self.max_bytes = max_bytes
        self.max_image = max_image
        self._images: collections.OrderedDict[bytes, tuple[ImageKind, bytes]] = collections.OrderedDict()
        self._bytes = 0
        self._prints: dict[bytes, bool] = {}       # hash -> its module calls device printf
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def check(self, digest: bytes, image: bytes | memoryview) -> None:
        """Raise unless an image a client sent is within the cap and matches its hash."""
        if len(image) > self.max_image:
            raise BackendError(curesult.INVALID_VALUE,
                               f"a module image of {len(image)} bytes is over this server's cap of "
                               f"{self.max_image} bytes (--max-image)")
        if image_hash(image) != digest:
            raise BackendError(curesult.INVALID_VALUE,
                               "the module image does not match the hash sent with it: "
                               "send the SHA-256 of the bytes")

    def put(self, digest: bytes, kind: ImageKind, image: bytes) -> None:
        """Keep an image that passed :meth:`check` and loaded."""
        with self._lock:
            if digest in self._images:
                self._images.move_to_end(digest)
                return
            self._images[digest] = (kind, bytes(image))
            self._bytes += len(image)
            while self._bytes > self.max_bytes and len(self._images) > 1:
                old, (_, data) = self._images.popitem(last=False)
                self._prints.pop(old, None)
                self._bytes -= len(data)
                log.debug("image cache: evicted %s (%d bytes)", old.hex()[:16], len(data))

    def get(self, digest: bytes) -> tuple[ImageKind, bytes] | None:
        with self._lock:
            entry = self._images.get(digest)
            if entry is None:
                self.misses += 1
                return None
            self._images.move_to_end(digest)
            self.hits += 1
            return entry

    def calls_printf(self, digest: bytes) -> bool | None:
        """Whether a module of this image calls device printf, once a backend said so (else None)."""
        with self._lock:
            return self._prints.get(digest)

    def note_calls_printf(self, digest: bytes, prints: bool) -> None:
        with self._lock:
            if digest in self._images:
                self._prints[digest] = prints

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._images)
