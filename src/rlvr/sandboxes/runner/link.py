"""The split runner's channel between its halves (`rlvr.sandboxes.runner.split`): framed
JSON messages over a socket, and the test half's side of it: `Link`, the `Remote`
proxies of the program's objects, and the exceptions the test half raises for what the
program did. Nothing here trusts a byte the program half sends.
"""

from __future__ import annotations

# `_socket`, not `socket`: the zygote holds what the runner imports, and every job's
# fork copies it (see `rlvr.sandboxes.local.zygote`).
import _json
import _socket
import builtins
import contextlib
import json
import struct

# Bound here at import, before any program runs in the process: the program half
# reports through these, and a program that rebinds `json.dumps`, `struct.pack` or a
# builtin breaks only its own values, never the channel (see `_dumps`).
from builtins import (  # noqa: UP029
    AssertionError,
    BaseException,
    Exception,
    IndexError,
    KeyError,
    OSError,
    RecursionError,
    StopAsyncIteration,
    StopIteration,
    TypeError,
    ValueError,
    bytearray,
    bytes,
    dict,
    enumerate,
    id,
    int,
    isinstance,
    issubclass,
    iter,
    len,
    list,
    min,
    str,
    type,
    vars,
)
from typing import Any

from rlvr.sandboxes.runner import audit, inplace, wire

MAX_MESSAGE = 16 * 1024 * 1024


class ProgramGone(BaseException):
    """The program half died, timed out earlier, or broke the protocol."""


class ProgramAborted(BaseException):
    """The program raised SystemExit/KeyboardInterrupt/...: never a pass, and not
    catchable by a test's `except Exception`."""


class ProgramError(Exception):
    """A non-builtin exception raised by the program."""


# Builtin exceptions never raised again as themselves in the test half: iteration
# protocols and `with`/`for` machinery act on these, and an AssertionError is a verdict.
CONTROL_FLOW = (StopIteration, StopAsyncIteration, AssertionError)


def _not_json(value: Any) -> Any:
    raise TypeError(f"not JSON: {type(value).__name__}")


# json's C encoder and scanner themselves (what `json.dumps` and `json.loads` run):
# `json.dumps` looks up module globals on every call, which a program may rebind.
_ENCODER = _json.make_encoder(None, _not_json, _json.encode_basestring_ascii, None, ":", ",", False, False, True)
_SCANNER = _json.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the C scanner takes a decoder
_HEADER = struct.Struct("!I")
_pack, _unpack, _join = _HEADER.pack, _HEADER.unpack, "".join


def _dumps(obj: Any) -> bytes:
    return _join(_ENCODER(obj, 0)).encode()


def _loads(data: bytes) -> Any:
    text = data.decode()
    try:
        value, end = _SCANNER(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text):
        raise ValueError("extra data after JSON")
    return value


def send_msg(sock: _socket.socket, obj: Any) -> None:
    body = _dumps(obj)
    sock.sendall(_pack(len(body)) + body)


def recv_msg(sock: _socket.socket) -> Any:
    head = _recv_exact(sock, 4)
    (size,) = _unpack(head)
    if size > MAX_MESSAGE:
        raise ProgramGone("program sent an oversized message")
    return _loads(_recv_exact(sock, size))


def _recv_exact(sock: _socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ProgramGone("program process exited")
        buf += chunk
    return bytes(buf)


class Link:
    """The test half's end of the program's socket."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock, self.alive = sock, True
        self.proxies: dict[int, Remote] = {}
        # The last class with comparison of its own that the program half said a value
        # it answered holds (`foreign`): telemetry for the test's record, never a verdict.
        self.custom: str | None = None
        # What the program half's audit hook noted (`audit`): telemetry, never a verdict.
        self.evidence: set[str] = set()
        # What of it a record has carried already.
        self.recorded: set[str] = set()

    def note(self, answer: Any) -> None:
        found = answer.get("a") if type(answer) is dict else None
        if type(found) is list:
            self.evidence.update(name for name in found[:8] if type(name) is str and name in audit.NAMES)

    def kill(self) -> None:
        # The program half has another uid, so it cannot be signalled from here; cut
        # it off instead. It dies with this process (pid 1 of the job's namespace).
        if self.alive:
            self.alive = False
            with contextlib.suppress(OSError):
                self.sock.close()

    def call(self, index: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the program's object `index`; the arguments it changed in place are then
        changed here too (`inplace`)."""
        req = {"op": "call", "h": index, "a": encode_arg(list(args)), "k": encode_arg(kwargs)}
        same = _aliases(args, kwargs)
        if same:
            req["same"] = same
        return self.request(req, (args, kwargs))

    def request(self, req: dict[str, Any], passed: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> Any:
        if not self.alive:
            raise ProgramGone("program process is gone")
        try:
            send_msg(self.sock, req)
            answer = recv_msg(self.sock)
        except (OSError, ValueError) as exc:
            self.kill()
            raise ProgramGone(str(exc)) from None
        except BaseException:
            # A timeout mid-call leaves the program busy and the stream out of step.
            self.kill()
            raise
        if type(answer) is not dict:
            self.kill()
            raise ProgramGone("malformed answer")
        self.note(answer)
        custom = answer.get("c")
        if type(custom) is str:
            self.custom = custom[:100]
        if answer.get("stop") is True and req["op"] == "next":
            raise StopIteration
        if "ok" in answer:
            try:
                if passed is not None and "m" in answer:
                    self._write_back(answer["m"], passed)
                return wire.decode(answer["ok"], self.proxy, rich=True)
            except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
                self.kill()
                raise ProgramGone(f"malformed value: {exc}") from None
        raise program_exception(answer)

    def _write_back(self, changed: Any, passed: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        """Write the program's new state of each argument it changed (`inplace`) into
        the test half's own: only arguments of a mutable type, each as its type."""
        if type(changed) is not list or len(changed) > len(passed[0]) + len(passed[1]):
            raise ValueError("bad changed arguments")
        for entry in changed:
            if type(entry) is not list or len(entry) != 2:
                raise ValueError("bad changed argument")
            target = _argument(passed, entry[0])
            if inplace.is_mutable(target):
                inplace.update(target, wire.decode(entry[1], self.proxy, rich=True))

    def proxy(self, index: int, type_name: str) -> Remote:
        """The one proxy of the program's object `index` (the program half numbers each
        object once), so `is` and identity hold in the tests as in the program."""
        remote = self.proxies.get(index)
        if remote is None:
            remote = self.proxies[index] = Remote(self, index, type_name)
        return remote


def program_exception(answer: dict[str, Any]) -> BaseException:
    """What the test half raises for an exception the program raised: see the module's
    docstring. The program names the type; only a plain builtin `Exception` outside
    `CONTROL_FLOW` is raised as that type."""
    name, msg = str(answer.get("err"))[:100], str(answer.get("msg"))[:2000]
    text = f"program raised {name}: {msg}"
    if answer.get("base") is not True:
        return ProgramAborted(text)
    exc_type = vars(builtins).get(name)
    if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
        return ProgramError(text)
    if issubclass(exc_type, CONTROL_FLOW):
        return ProgramAborted(text)
    try:
        exc = exc_type(msg)
    except Exception:  # a type whose constructor wants more (UnicodeDecodeError, ...)
        return ProgramError(text)
    return exc if type(exc) is exc_type else ProgramError(text)


def _arg_handle(obj: Any) -> int:
    if type(obj) is Remote:
        return obj._h
    raise wire.Unsupported(f"cannot pass {type(obj).__name__} to the program")


def encode_arg(value: Any) -> Any:
    """A value of the tests' for the program: plain and rich data, the program's own
    objects by handle, and an iterator as the items it yields."""
    return wire.encode(value, _arg_handle, rich=True, iterators=True)


def _argument(passed: tuple[tuple[Any, ...], dict[str, Any]], position: Any) -> Any:
    """The argument at `position` (an index, or a keyword's name), or None."""
    args, kwargs = passed
    if type(position) is int and 0 <= position < len(args):
        return args[position]
    return kwargs.get(position) if type(position) is str else None


def _aliases(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[list[Any]]:
    """[later position, first position] for each mutable argument passed twice
    (`merge(xs, xs)`): the program half passes one object in both places."""
    first: dict[int, Any] = {}
    same = []
    for position, value in [*enumerate(args), *kwargs.items()]:
        if inplace.is_mutable(value):
            if id(value) in first:
                same.append([position, first[id(value)]])
            else:
                first[id(value)] = position
    return same


class Remote:
    """An object that lives in the program's process (an instance of the program's own
    class, a function, ...). The tests may use it as the program's own code would: get
    and set its attributes, call it and its methods, iterate it, index it, take its
    `len`, `str` and truth value, and compare it with another program object, each a
    request the program half answers with data.

    It never stands in for a value of the test half's: compared with anything but a
    program object it is equal to nothing (the program's `__eq__` never runs), and a
    truth value or `str` the program answers must be exactly a bool or a str. Where a
    test compares two program objects, the program's `__eq__` answers, as it would in
    the dataset's own harness: such a test rests on a name the program gives besides
    its entry point, and the verifier reports it (`untrusted_names`)."""

    __slots__ = ("_h", "_link", "_type")
    _h: int
    _link: Link
    _type: str

    def __init__(self, link: Link, index: int, type_name: str) -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_h", index)
        object.__setattr__(self, "_type", type_name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._link.call(self._h, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._link.request({"op": "getattr", "h": self._h, "n": name})

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__"):
            raise AttributeError(name)
        self._link.request({"op": "setattr", "h": self._h, "n": name, "v": encode_arg(value)})

    def __iter__(self) -> Any:
        """An iterator of the program's (a generator) is itself, and yields one item per
        request, so an endless one is never drawn out; another iterable's items come at
        once."""
        items = self._link.request({"op": "iter", "h": self._h})
        if items is self:
            return self
        if type(items) is not list:
            raise TypeError(f"iter() of a {self._type} from the program is not an iterator")
        return iter(items)

    def __next__(self) -> Any:
        return self._link.request({"op": "next", "h": self._h})

    def __len__(self) -> int:
        n = self._link.request({"op": "len", "h": self._h})
        if type(n) is not int:
            raise TypeError(f"len() of a {self._type} from the program is not an int")
        return n

    def __bool__(self) -> bool:
        truth = self._link.request({"op": "bool", "h": self._h})
        if type(truth) is not bool:
            raise TypeError(f"the truth value of a {self._type} from the program is not a bool")
        return truth

    def __str__(self) -> str:
        text = self._link.request({"op": "str", "h": self._h})
        if type(text) is not str:
            raise TypeError(f"str() of a {self._type} from the program is not a str")
        return text

    def __getitem__(self, key: Any) -> Any:
        return self._link.request({"op": "getitem", "h": self._h, "k": encode_arg(key)})

    def _compare(self, other: object, op: str, otherwise: Any) -> Any:
        """The program's answer where `other` is a program object too, else `otherwise`
        (identity for equality, no order)."""
        if type(other) is not Remote or other._link is not self._link:
            return otherwise
        return self._link.request({"op": "compare", "h": self._h, "c": op, "o": other._h})

    def __eq__(self, other: object) -> Any:
        return self._compare(other, "==", self is other)

    def __ne__(self, other: object) -> Any:
        return self._compare(other, "!=", self is not other)

    def __lt__(self, other: object) -> Any:
        return self._compare(other, "<", NotImplemented)

    def __le__(self, other: object) -> Any:
        return self._compare(other, "<=", NotImplemented)

    def __gt__(self, other: object) -> Any:
        return self._compare(other, ">", NotImplemented)

    def __ge__(self, other: object) -> Any:
        return self._compare(other, ">=", NotImplemented)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<program {self._type}>"


# What the test half sends the program half once it may start the program.
