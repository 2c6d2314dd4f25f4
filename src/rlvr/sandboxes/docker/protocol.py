"""What the host and a sandbox container's command (`inside`) say to each other.

In, on the container's stdin: one request, a header (JSON: the job's limits, and the
uid and gid its program runs as) and the job's data (the runner's frames), each behind a
4-byte length. The header's `steps`, if any, are the sizes of the data's last parts:
a call or values job's tests' inputs, which `inside` sends the job one at a time.
Out, on the container's stdout: messages, each a tag byte, a 4-byte length
and the payload: `HELLO` first (this protocol's `VERSION`), then the job's stdout, stderr
and record channel as they come, then one `EXIT` message (JSON: exit code, signal, CPU
seconds). Docker wraps stdout in its own attach frames (`ATTACH`).

Everything the host learns comes through this stream: it never reads a file the job
could have written, and follows no path inside the container.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

LENGTH = struct.Struct("!I")
MAX_HEADER = 64 * 1024
MAX_DATA = 256 * 1024 * 1024
STDOUT, STDERR, CHANNEL, EXIT, HELLO = b"1", b"2", b"3", b"X", b"H"
# Said in `HELLO` by an image whose pid 1 gives each half of a job its own uid and sends
# a call or values job's tests' inputs one at a time (`steps`); the host trusts no
# result from an image that does not say it (an older one would run the job as the root
# its container now starts as, or hand the program every input at once).
VERSION = b"3"
MESSAGE = struct.Struct("!cI")  # tag, length
# Docker's attach multiplexing (non-TTY): stream id, three zero bytes, length.
ATTACH = struct.Struct("!B3xI")
ATTACH_STDERR = 2  # the stream id of stderr; stdout, 1, is everything else


def request(limits: dict[str, Any], data: bytes) -> bytes:
    header = json.dumps(limits).encode()
    return LENGTH.pack(len(header)) + header + LENGTH.pack(len(data)) + data


def _read_exact(fd: int, n: int) -> bytes:
    parts = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the request ended early")
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_header(fd: int) -> dict[str, Any]:
    """A request's header, and not a byte more: the job's data stays unread (`inside`
    forks the job before it reads the data, so that no copy of its memory holds it)."""
    (size,) = LENGTH.unpack(_read_exact(fd, LENGTH.size))
    if size > MAX_HEADER:
        raise ValueError("request header too large")
    limits = json.loads(_read_exact(fd, size))
    if type(limits) is not dict:
        raise ValueError("request header is not an object")
    return limits


def read_data(fd: int) -> bytes:
    """A request's data, after its header (`read_header`)."""
    (size,) = LENGTH.unpack(_read_exact(fd, LENGTH.size))
    if size > MAX_DATA:
        raise ValueError("job data too large")
    return _read_exact(fd, size)


def split_steps(data: bytes, sizes: Any) -> tuple[bytes, list[bytes]]:
    """The data to send the job at once, and the tests' inputs (`steps`: their sizes,
    the data's last parts) to send one at a time."""
    if sizes is None:
        return data, []
    if type(sizes) is not list or not all(type(n) is int and n >= 0 for n in sizes) or sum(sizes) > len(data):
        raise ValueError("bad steps")
    end = len(data) - sum(sizes)
    head, steps = data[:end], []
    for size in sizes:
        steps.append(data[end : end + size])
        end += size
    return head, steps


def message(tag: bytes, payload: bytes) -> bytes:
    return MESSAGE.pack(tag, len(payload)) + payload


class Reader:
    """Splits a byte stream into (tag, payload) pairs, for either framing: `MESSAGE`
    (ours) or `ATTACH` (Docker's, whose tag is the stream id)."""

    def __init__(self, header: struct.Struct) -> None:
        self.header = header
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[Any, bytes]]:
        self.buffer += data
        out = []
        while len(self.buffer) >= self.header.size:
            tag, size = self.header.unpack_from(self.buffer)
            end = self.header.size + size
            if len(self.buffer) < end:
                break
            out.append((tag, bytes(self.buffer[self.header.size : end])))
            del self.buffer[:end]
        return out
