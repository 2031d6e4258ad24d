"""The CALC test program, with WHOAMI answering the caller's TLS identity as its name."""
from __future__ import annotations

from cricket.rpc import current_call
from rpc_calc import CalcV1


class TlsCalc(CalcV1):
    def WHOAMI(self):
        ctx = current_call()
        return ctx.cred_flavor, 0, 0, ctx.tls_identity or "", ctx.connection_id
