"""What one connection may cost a shared server before and after it authenticated (issue 15)."""
from __future__ import annotations

# Before its HELLO succeeded a connection's records stay this small (a HELLO is a few hundred
# bytes): a stranger cannot make the server buffer a large record.
PRE_HELLO_MAX_RECORD = 64 << 10
DEFAULT_HELLO_TIMEOUT = 10.0      # seconds from connecting to a successful HELLO
DEFAULT_MAX_SESSIONS = 256        # client connections at once
