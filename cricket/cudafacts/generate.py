"""Generate the error tables of :mod:`cricket.cudafacts` from the CUDA 13 headers.

- ``cudart_errors.py``: every ``cudaError`` code of ``driver_types.h`` with its name and the message
  NVIDIA's ``libcudart.so.13`` gives for it (``cudaGetErrorString``; the messages are not in the
  headers, so the library is asked once, here).
- ``device_attributes.py``: every ``CUdevice_attribute`` of ``cuda.h`` (the runtime's
  ``cudaDeviceAttr`` has the same numbers) with its documentation.
- ``curesult.py``: every ``CUresult`` of ``cuda.h`` with its name and message. The driver gives the
  runtime's message for a code both APIs define (``cuGetErrorString(CUDA_ERROR_INVALID_VALUE)`` is
  "invalid argument", as tools print it); a code only the driver has gets the first sentence of its
  documentation in ``cuda.h``.
- ``streams.py``: the special stream handles (``cudaStreamLegacy``, ``cudaStreamPerThread`` of
  ``driver_types.h``, the device runtime's ``cudaStreamTailLaunch`` and ``cudaStreamFireAndForget``)
  and the stream flag ``cudaStreamNonBlocking``; the driver's ``CU_STREAM_LEGACY``,
  ``CU_STREAM_PER_THREAD`` and ``CU_STREAM_NON_BLOCKING`` (``cuda.h``) must have the same values.

The output is checked in: cricket needs neither the headers nor libcudart at run time, and an
installed package never regenerates anything. ``cext/driver/gen_driver.py`` writes the C table of
the ``libcuda.so.1`` replacement from ``curesult.py``.

Run: ``python -m cricket.cudafacts.generate [--cuda-home DIR] [--out DIR]``.
"""
from __future__ import annotations

import argparse
import ctypes
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse_cudart_enum(driver_types_h: str) -> list[tuple[str, int]]:
    """(name, value) of every ``cudaError``, in header order."""
    m = re.search(r"enum\s+__device_builtin__\s+cudaError\s*\{(.*?)\};", driver_types_h, flags=re.S)
    if not m:
        raise SystemExit("driver_types.h: enum cudaError not found")
    body = re.sub(r"/\*.*?\*/", " ", m.group(1), flags=re.S)
    entries = [(name, int(value, 0)) for name, value in
               re.findall(r"\b(cuda\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+)", body)]
    if not entries or entries[0] != ("cudaSuccess", 0):
        raise SystemExit("driver_types.h: unexpected enum cudaError layout")
    return entries


def parse_curesult_enum(cuda_h: str) -> list[tuple[str, int, str]]:
    """(name, value, first sentence of its documentation) of every ``CUresult``."""
    body = re.search(r"typedef enum cudaError_enum \{(.*?)\}\s*CUresult;", cuda_h, re.S)
    if not body:
        raise SystemExit("cuda.h: no `typedef enum cudaError_enum {...} CUresult`")
    entries = []
    for comment, name, value in re.findall(r"/\*\*(.*?)\*/\s*(CUDA_\w+)\s*=\s*(\d+)", body.group(1), re.S):
        text = " ".join(line.strip().lstrip("*").strip() for line in comment.splitlines())
        text = re.sub(r"\\deprecated\s*", "Deprecated: ", text)
        text = re.sub(r"\\(?:ref|p|c)\s+", "", text)
        text = re.sub(r"::(\w+)", r"\1", " ".join(text.split()))
        sentence = re.match(r"(.+?\.)(\s|$)", text)
        entries.append((name, int(value), sentence.group(1) if sentence else text))
    if not entries or entries[0][:2] != ("CUDA_SUCCESS", 0):
        raise SystemExit("cuda.h: unexpected CUresult layout")
    return entries


def parse_device_attributes(cuda_h: str) -> list[tuple[str, int, str]]:
    """(name, value, its ``/**< ... */`` description) of every ``CUdevice_attribute``."""
    body = re.search(r"typedef enum CUdevice_attribute_enum \{(.*?)\}\s*CUdevice_attribute;", cuda_h, re.S)
    if not body:
        raise SystemExit("cuda.h: no `typedef enum CUdevice_attribute_enum {...} CUdevice_attribute`")
    entries = [(name, int(value), " ".join(doc.split()))
               for name, value, doc in re.findall(r"(CU_DEVICE_ATTRIBUTE_\w+)\s*=\s*(\d+),?\s*/\*\*<\s*(.*?)\s*\*/",
                                                  body.group(1), re.S)]
    if not entries or entries[0][:2] != ("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK", 1):
        raise SystemExit("cuda.h: unexpected CUdevice_attribute layout")
    return entries


def define(header: str, name: str) -> int:
    m = re.search(rf"#define\s+{name}\s+(\d+)", header)
    if not m:
        raise SystemExit(f"#define {name} not found")
    return int(m.group(1))


def handle_define(header: str, name: str) -> int:
    """The value of ``#define NAME ((cudaStream_t)0x1)``, a handle cast from a number, or of a plain
    ``#define NAME 0x01``."""
    m = re.search(rf"#define\s+{name}\s+(?:\(\(\w+\)\s*)?(0x[0-9a-fA-F]+|\d+)\)?", header)
    if not m:
        raise SystemExit(f"#define {name} not found")
    return int(m.group(1), 0)


def enum_value(header: str, name: str) -> int:
    m = re.search(rf"\b{name}\s*=\s*(0x[0-9a-fA-F]+|\d+)", header)
    if not m:
        raise SystemExit(f"enumerator {name} not found")
    return int(m.group(1), 0)


def parse_stream_facts(driver_types_h: str, cuda_h: str, device_runtime_h: str) -> dict[str, int]:
    """The special stream handles and the non-blocking flag, checked to agree between the runtime's
    and the driver's headers."""
    facts = {
        "LEGACY": handle_define(driver_types_h, "cudaStreamLegacy"),
        "PER_THREAD": handle_define(driver_types_h, "cudaStreamPerThread"),
        "TAIL_LAUNCH": handle_define(device_runtime_h, "cudaStreamTailLaunch"),
        "FIRE_AND_FORGET": handle_define(device_runtime_h, "cudaStreamFireAndForget"),
        "NON_BLOCKING": handle_define(driver_types_h, "cudaStreamNonBlocking"),
    }
    driver = {"LEGACY": handle_define(cuda_h, "CU_STREAM_LEGACY"),
              "PER_THREAD": handle_define(cuda_h, "CU_STREAM_PER_THREAD"),
              "NON_BLOCKING": enum_value(cuda_h, "CU_STREAM_NON_BLOCKING")}
    for name, value in driver.items():
        if facts[name] != value:
            raise SystemExit(f"cuda.h gives {name} {value:#x}, driver_types.h {facts[name]:#x}")
    return facts


def messages_from_libcudart(libcudart: Path, entries: list[tuple[str, int]]) -> dict[int, str]:
    lib = ctypes.CDLL(str(libcudart))
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    lib.cudaGetErrorName.restype = ctypes.c_char_p
    messages = {}
    for name, value in entries:
        real_name = lib.cudaGetErrorName(value).decode()
        if real_name != name:
            raise SystemExit(f"{libcudart} names code {value} {real_name!r}, the header says {name!r}")
        messages[value] = lib.cudaGetErrorString(value).decode()
    messages[-1] = lib.cudaGetErrorString(-1).decode()   # the answer for codes it does not know
    return messages


_CUDART_TEMPLATE = '''"""CUDA runtime error codes, names and messages (CUDA {major}).

Generated by ``python -m cricket.cudafacts.generate`` from driver_types.h (names, values) and
NVIDIA's libcudart.so.{major} (messages). Do not edit.
"""
from __future__ import annotations

CUDART_VERSION = {version}

# Name and message given for a code that is not in the table (as libcudart does).
UNRECOGNIZED = {unrecognized!r}

# code: (name, message)
ERRORS: dict[int, tuple[str, str]] = {{
{rows}
}}

CODES: dict[str, int] = {{name: code for code, (name, _) in ERRORS.items()}}
'''

_CURESULT_TEMPLATE = '''"""CUDA driver result codes (CUresult): every code of cuda.h with its name and message.

Generated by ``python -m cricket.cudafacts.generate`` from cuda.h; a code the runtime also defines
has the runtime's message (see ``generate.py``). Do not edit. Each code is bound twice: by its C
name (``CUDA_ERROR_INVALID_VALUE``) and short (``INVALID_VALUE``, as ``curesult.INVALID_VALUE``).
"""
from __future__ import annotations

CUDA_VERSION = {version}

{constants}

# code: (name, message)
ERRORS: dict[int, tuple[str, str]] = {{
{rows}
}}

NAMES: dict[int, str] = {{code: name for code, (name, _) in ERRORS.items()}}


def error_name(code: int) -> str:
    """``CUDA_ERROR_ILLEGAL_ADDRESS`` for 700; ``CUresult(N)`` for a code CUDA does not define."""
    entry = ERRORS.get(code)
    return entry[0] if entry else f"CUresult({{code}})"


def error_string(code: int) -> str:
    """The one-line message cuGetErrorString gives for ``code``."""
    entry = ERRORS.get(code)
    return entry[1] if entry else f"unrecognized error code {{code}}"
'''


_ATTRIBUTES_TEMPLATE = '''"""CUDA device attributes (CUdevice_attribute; cudaDeviceAttr has the same numbers).

Generated by ``python -m cricket.cudafacts.generate`` from cuda.h. Do not edit.
"""
from __future__ import annotations

{constants}

MAX = {maximum}       # CU_DEVICE_ATTRIBUTE_MAX: attributes are 1 .. MAX-1

# number: (name, description); the name is cuda.h's first for the number (older aliases follow it)
ATTRIBUTES: dict[int, tuple[str, str]] = {{
{rows}
}}

NAMES: dict[int, str] = {{number: name for number, (name, _) in ATTRIBUTES.items()}}
'''


_STREAMS_TEMPLATE = '''"""Special stream handles and stream flags (CUDA {major}).

Generated by ``python -m cricket.cudafacts.generate`` from driver_types.h, cuda.h and
cuda_device_runtime_api.h. Do not edit. The runtime's names and the driver's have the same values
(the generator checks it): ``cudaStreamLegacy`` is ``CU_STREAM_LEGACY``, ``cudaStreamNonBlocking``
is ``CU_STREAM_NON_BLOCKING``. C code compiled against the CUDA headers uses their macros instead.
"""
from __future__ import annotations

# handles a stream argument may hold besides 0 and a stream the program created
LEGACY = {LEGACY:#x}             # cudaStreamLegacy, CU_STREAM_LEGACY: the legacy default stream
PER_THREAD = {PER_THREAD:#x}         # cudaStreamPerThread, CU_STREAM_PER_THREAD: the thread's default stream
TAIL_LAUNCH = {TAIL_LAUNCH:#x}        # cudaStreamTailLaunch (device code, CUDA dynamic parallelism)
FIRE_AND_FORGET = {FIRE_AND_FORGET:#x}    # cudaStreamFireAndForget (device code, CUDA dynamic parallelism)

# flags of cudaStreamCreateWithFlags and cuStreamCreate
NON_BLOCKING = {NON_BLOCKING:#x}       # cudaStreamNonBlocking, CU_STREAM_NON_BLOCKING
'''


def render_streams(facts: dict[str, int], version: int) -> str:
    return _STREAMS_TEMPLATE.format(major=version // 1000, **facts)


def render_attributes(entries: list[tuple[str, int, str]], maximum: int) -> str:
    constants = "\n".join(f"{name.removeprefix('CU_DEVICE_ATTRIBUTE_')} = {value}" for name, value, _ in entries)
    first: dict[int, tuple[str, str]] = {}
    for name, value, doc in entries:
        first.setdefault(value, (name.removeprefix("CU_DEVICE_ATTRIBUTE_"), doc))
    rows = "\n".join(f"    {value}: ({name!r}, {doc!r})," for value, (name, doc) in first.items())
    return _ATTRIBUTES_TEMPLATE.format(constants=constants, rows=rows, maximum=maximum)


def render_cudart(entries: list[tuple[str, int]], messages: dict[int, str], version: int) -> str:
    rows = "\n".join(f"    {value}: ({name!r}, {messages[value]!r})," for name, value in entries)
    return _CUDART_TEMPLATE.format(major=version // 1000, version=version, unrecognized=messages[-1],
                                   rows=rows)


def render_curesult(entries: list[tuple[str, int, str]], runtime: dict[int, str], version: int) -> str:
    constants = []
    for name, value, _ in entries:
        short = name.removeprefix("CUDA_ERROR_").removeprefix("CUDA_")
        constants.append(f"{short} = {name} = {value}")
    rows = "\n".join(f"    {value}: ({name!r}, {runtime.get(value, doc)!r}),"
                     for name, value, doc in entries)
    return _CURESULT_TEMPLATE.format(version=version, constants="\n".join(constants), rows=rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  python -m cricket.cudafacts.generate                  "
               "regenerate from /usr/local/cuda\n"
               "  python -m cricket.cudafacts.generate --cuda-home /opt/cuda-13.0 --out /tmp/facts")
    parser.add_argument("--cuda-home", type=Path, default=Path("/usr/local/cuda"))
    parser.add_argument("--out", type=Path, default=HERE, help="where the tables go (default: this package)")
    args = parser.parse_args(argv)
    include = args.cuda_home / "include"
    cudart = parse_cudart_enum((include / "driver_types.h").read_text(errors="replace"))
    version = define((include / "cuda_runtime_api.h").read_text(), "CUDART_VERSION")
    messages = messages_from_libcudart(args.cuda_home / "lib64" / f"libcudart.so.{version // 1000}", cudart)
    cuda_h = (include / "cuda.h").read_text(errors="replace")
    driver = parse_curesult_enum(cuda_h)
    attributes = parse_device_attributes(cuda_h)
    maximum = re.search(r"CU_DEVICE_ATTRIBUTE_MAX\b\s*(?:=\s*(\d+))?", cuda_h)
    if not maximum:
        raise SystemExit("cuda.h: CU_DEVICE_ATTRIBUTE_MAX not found")
    top = int(maximum.group(1)) if maximum.group(1) else max(v for _, v, _ in attributes) + 1
    (args.out / "device_attributes.py").write_text(render_attributes(attributes, top))
    (args.out / "cudart_errors.py").write_text(render_cudart(cudart, messages, version))
    (args.out / "curesult.py").write_text(render_curesult(driver, messages, define(cuda_h, "CUDA_VERSION")))
    streams = parse_stream_facts((include / "driver_types.h").read_text(errors="replace"), cuda_h,
                                 (include / "cuda_device_runtime_api.h").read_text(errors="replace"))
    (args.out / "streams.py").write_text(render_streams(streams, version))
    print(f"cricket.cudafacts.generate: {len(cudart)} runtime and {len(driver)} driver codes written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
