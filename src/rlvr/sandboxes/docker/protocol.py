"""What the host and a sandbox container's command (`inside`) say to each other.

In, on the container's stdin: one request, a header (JSON: the job's limits) and the
job's data (the runner's frames), each behind a 4-byte length. Out, on the container's
stdout: messages, each a tag byte, a 4-byte length and the payload: the job's stdout,
stderr and record channel as they come, then one `EXIT` message (JSON: exit code,
signal, CPU seconds). Docker wraps stdout in its own attach frames (`read_attach`).

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
STDOUT, STDERR, CHANNEL, EXIT = b"1", b"2", b"3", b"X"
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


def read_request(fd: int) -> tuple[dict[str, Any], bytes]:
    (size,) = LENGTH.unpack(_read_exact(fd, LENGTH.size))
    if size > MAX_HEADER:
        raise ValueError("request header too large")
    limits = json.loads(_read_exact(fd, size))
    if type(limits) is not dict:
        raise ValueError("request header is not an object")
    (size,) = LENGTH.unpack(_read_exact(fd, LENGTH.size))
    if size > MAX_DATA:
        raise ValueError("job data too large")
    return limits, _read_exact(fd, size)


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
