"""Stock PyTorch's eager CUDA basics, run by tests/torch under `cricket run`: prints one JSON object
of what torch saw, and what the server describes, for the tests to compare."""
import json
import os

import torch

from cricket.client.api import connect

out = {"available": torch.cuda.is_available(), "count": torch.cuda.device_count()}
props = torch.cuda.get_device_properties(0)
out["name"] = torch.cuda.get_device_name(0)
out["props"] = {"major": props.major, "minor": props.minor, "sms": props.multi_processor_count,
                "total_memory": props.total_memory}
server = connect(os.environ["CRICKET_SERVER"]).devices[0]
out["server"] = {"name": server.name, "major": server.compute_capability[0],
                 "minor": server.compute_capability[1], "sms": server.attribute(16),
                 "total_memory": server.total_memory}

host = torch.randn(4096)
dev = host.cuda()                                           # pageable, synchronous
out["pageable_round_trip"] = torch.equal(dev.cpu(), host)
out["device_to_device"] = torch.equal(dev.clone().cpu(), host)
into = torch.empty(4096, device="cuda")
into.copy_(host)
out["copy_into_device"] = torch.equal(into.cpu(), host)

before = torch.cuda.memory_allocated()
block = torch.empty(1 << 20, device="cuda")                 # 4 MiB of float32
out["allocated_grew"] = torch.cuda.memory_allocated() - before
del block
out["allocated_after_free"] = torch.cuda.memory_allocated() - before

stream = torch.cuda.Stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
pinned = host.pin_memory()
back = torch.empty_like(pinned).pin_memory()
with torch.cuda.stream(stream):
    start.record()
    on_stream = pinned.to("cuda", non_blocking=True)       # pinned, asynchronous, on the stream
    back.copy_(on_stream, non_blocking=True)
    end.record()
end.synchronize()
out["pinned_on_stream"] = torch.equal(back, host)
out["event_query"] = end.query()
out["elapsed_ms"] = start.elapsed_time(end)
out["stream_query"] = stream.query()
torch.cuda.synchronize()
out["capturing"] = torch.cuda.is_current_stream_capturing()
print(json.dumps(out))
