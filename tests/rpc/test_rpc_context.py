"""What a handler knows about its call: outside a handler there is no call to ask about."""
from __future__ import annotations

import pytest

from cricket.rpc import RpcError, current_call, current_connection_id


def test_outside_a_handler_there_is_no_current_call():
    with pytest.raises(RpcError, match="outside of an RPC handler"):
        current_call()
    with pytest.raises(RpcError, match="outside of an RPC handler"):
        current_connection_id()
