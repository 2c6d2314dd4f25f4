"""What a program's literals stand for when written another way, for `literals`: an
answer table disguised as `143 + 1`, `'441'[::-1]`, `0x90`, a base64 or hex blob, or a
JavaScript template's `${100 + 44}` holds the same answers as one that spells them out.

Folding is bounded: expressions at most `MAX_FOLD_DEPTH` deep, integers of at most
`MAX_FOLD_BITS` bits, exponents of at most `MAX_EXPONENT`, repeated strings and lists of
at most `MAX_FOLD_CHARS` items, and blobs (decompressed ones too) of at most
`MAX_BLOB_CHARS`. Every scan is one pass of a linear regular expression, and every
fold one visit of a node CPython's parser already built.
"""

from __future__ import annotations

import ast
import base64
import binascii
import operator
import re
import zlib
from collections.abc import Callable
from typing import Any

__all__ = [
    "MAX_BLOB_CHARS",
    "MAX_EXPONENT",
    "MAX_FOLD_BITS",
    "MAX_FOLD_CHARS",
    "MAX_FOLD_DEPTH",
    "decoded",
    "fold",
    "hints",
    "int_list",
    "sequence_text",
    "unfold_c_like",
    "without_separators",
    "written_folded",
]

MAX_FOLD_BITS = 256
MAX_FOLD_DEPTH = 32
MAX_EXPONENT = 64
MAX_FOLD_CHARS = 4096
MAX_BLOB_CHARS = 64 * 1024
# A blob is read as encoded text only if it is this long, and decodes to this share of
# printable characters: a word or a hash of hex digits decodes to noise.
MIN_BLOB_CHARS = 16
MIN_PRINTABLE_SHARE = 0.95
_ZLIB_HEADER = b"\x78"

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
# `a op b` between two integer literals that nothing else binds to (`2 * 3 + 1` is left
# alone: folding it left to right would be wrong), and integers in other bases.
# The same spacing on both sides: `"1 -1"` in a string is two numbers, not a difference.
# A string that is only a difference (`"4-6"`) is a key, not arithmetic.
_C_ARITHMETIC = re.compile(r"(?<![\w.*/%)\]\"'`])(\d{1,18})( ?)([-+*])\2(\d{1,18})(?![\w.*/%(\[\"'`])")
_C_SEPARATOR = re.compile(r"(?<=\d)['_](?=\d)")
# A string's closing quote and the next one's opening, where nothing but a `+` or spaces
# lie between: one string.
_C_JOINED_STRINGS = re.compile(r"(?<=[^\\\s])\"(?:[ \t]+|[ \t]*\+[ \t]*)\"")
# With any integer suffix (`0x3b9aca07LL`, JavaScript's `0x1fn`), dropped with the base.
_C_OTHER_BASE = re.compile(r"(?<![\w.])0([xXbB])([0-9a-fA-F]{1,16})(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]|n)(?![\w.])")
# A decimal integer's suffix (`1000000007LL`), which would read as a word of its own.
_C_INTEGER_SUFFIX = re.compile(r"(?<=\d)(?:[uU][lL]{0,2}|[lL]{1,2}[uU]?)(?![\w.])")

# What `hints` reads in a program's text: arithmetic between two number literals, a
# reversed literal, a blob in quotes.
_TEXT_ARITHMETIC = re.compile(r"(\d{1,18}(?:\.\d{1,18})?)[ \t]*(\*\*|//|<<|[-+*/%^|&])[ \t]*(\d{1,18}(?:\.\d{1,18})?)")
_TEXT_REVERSED = re.compile(r"([\"'])([^\"'\\\n]{1,64})\1\[::-1\]")
_TEXT_BLOB = re.compile(r"([\"'`])([A-Za-z0-9+/]{16,}={0,2})\1")

_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitXor: operator.xor,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.LShift: operator.lshift,
}
_TEXT_OPERATORS: dict[str, type[ast.operator]] = {
    "+": ast.Add,
    "-": ast.Sub,
    "*": ast.Mult,
    "//": ast.FloorDiv,
    "/": ast.Div,
    "%": ast.Mod,
    "**": ast.Pow,
    "^": ast.BitXor,
    "|": ast.BitOr,
    "&": ast.BitAnd,
    "<<": ast.LShift,
}
_DECODERS = frozenset(
    {"b64decode", "b32decode", "b16decode", "b85decode", "a85decode", "unhexlify", "fromhex", "decompress"}
)


def hints(program: str) -> str:
    """The values a program's text shows written another way (`143 + 1`, `'441'[::-1]`,
    a base64 blob), read without parsing it: a superset of what `fold` and `decoded`
    find there, for a cheap first look."""
    found: list[str] = []
    for match in _TEXT_ARITHMETIC.finditer(program):
        value = _text_arithmetic(_text_number(match.group(1)), match.group(2), _text_number(match.group(3)))
        if value is not None:
            found.append(str(value))
    found.extend(match.group(2)[::-1] for match in _TEXT_REVERSED.finditer(program))
    found.extend(text for match in _TEXT_BLOB.finditer(program) if (text := decoded(match.group(2))) is not None)
    return " ".join(found)


def _text_number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def _text_arithmetic(left: int | float, sign: str, right: int | float) -> int | float | None:
    apply = _OPERATORS[_TEXT_OPERATORS[sign]]
    if sign in ("**", "<<") and right > MAX_EXPONENT:
        return None
    try:
        value = apply(left, right)
    except (ArithmeticError, TypeError):  # (bitwise operators take no floats)
        return None
    return value if type(value) is float or _small(value) else None


def fold(node: ast.AST, depth: int = 0) -> object | None:
    """The value `node` stands for when it is made of literals only (arithmetic, a
    reversed or repeated string, a decoded blob) at most `MAX_FOLD_DEPTH` deep, else
    None."""
    if isinstance(node, ast.Constant):
        return node.value
    if depth >= MAX_FOLD_DEPTH:
        return None
    depth += 1
    if isinstance(node, ast.BinOp):
        return _binary(node, depth)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Invert):
        return _unary(node.op, fold(node.operand, depth))
    if isinstance(node, ast.Subscript):
        return _reversed(node, depth)
    if isinstance(node, ast.Call):
        return _decoded_call(node, depth)
    return None


def _unary(op: ast.unaryop, value: object) -> object | None:
    if type(value) is float:
        return -value if isinstance(op, ast.USub) else None if isinstance(op, ast.Invert) else value
    if type(value) is not int or not _small(value):
        return None
    return -value if isinstance(op, ast.USub) else ~value if isinstance(op, ast.Invert) else value


def _binary(node: ast.BinOp, depth: int) -> object | None:
    apply = _OPERATORS.get(type(node.op))
    if apply is None:
        return None
    left = fold(node.left, depth)
    if left is None:
        return None
    right = fold(node.right, depth)
    if isinstance(left, str) and isinstance(right, str) and isinstance(node.op, ast.Add):
        return left + right if len(left) + len(right) <= MAX_FOLD_CHARS else None
    if isinstance(left, str) and type(right) is int and isinstance(node.op, ast.Mult):
        return left * right if 0 <= right and len(left) * right <= MAX_FOLD_CHARS else None
    if not _number(left) or not _number(right):
        return None
    if isinstance(node.op, ast.Pow | ast.LShift) and not (type(right) is int and 0 <= right <= MAX_EXPONENT):
        return None
    if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
        if left.bit_length() * right > MAX_FOLD_BITS:
            return None
    try:
        value = apply(left, right)
    except (ArithmeticError, TypeError, ValueError):
        return None
    return value if type(value) is float or _small(value) else None


def int_list(node: ast.AST, depth: int = 0) -> list[object] | None:
    """The integers a list or tuple display of literals holds, repeated or joined
    (`[49] * 8`, `[49] + [48] * 10`) within `MAX_FOLD_CHARS`; None for another node."""
    if depth >= MAX_FOLD_DEPTH:
        return None
    if isinstance(node, ast.List | ast.Tuple):
        values = [fold(element, depth + 1) for element in node.elts]
        return values if all(type(value) is int for value in values) else None
    if not isinstance(node, ast.BinOp):
        return None
    left = int_list(node.left, depth + 1)
    if isinstance(node.op, ast.Mult) and left is not None and type(count := fold(node.right, depth + 1)) is int:
        return left * count if 0 <= count and len(left) * count <= MAX_FOLD_CHARS else None
    right = int_list(node.right, depth + 1)
    if isinstance(node.op, ast.Add) and left is not None and right is not None:
        return left + right if len(left) + len(right) <= MAX_FOLD_CHARS else None
    return None


def _number(value: object) -> bool:
    return type(value) in (int, float)


def _small(value: object) -> bool:
    return type(value) is int and value.bit_length() <= MAX_FOLD_BITS


def _reversed(node: ast.Subscript, depth: int) -> object | None:
    """`'441'[::-1]`: a literal string or bytes reversed."""
    step = node.slice
    if not (isinstance(step, ast.Slice) and step.lower is None and step.upper is None and step.step is not None):
        return None
    if fold(step.step, depth) != -1:
        return None
    value = fold(node.value, depth)
    return value[::-1] if isinstance(value, str | bytes) else None


def _decoded_call(node: ast.Call, depth: int) -> object | None:
    """`base64.b64decode('...')`, `bytes.fromhex('...')`, `b'...'.decode()`: a blob
    decoded by a standard decoder, its first argument a literal."""
    function = node.func
    name = (
        function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""
    )
    if name == "decode" and isinstance(function, ast.Attribute):
        value = fold(function.value, depth)
        return value.decode("latin-1") if isinstance(value, bytes) else None
    if name not in _DECODERS or not node.args:
        return None
    blob = fold(node.args[0], depth)
    if not isinstance(blob, str | bytes) or len(blob) > MAX_BLOB_CHARS:
        return None
    text = blob.decode("latin-1") if isinstance(blob, bytes) else blob
    try:
        if name == "decompress":
            return _inflated(blob if isinstance(blob, bytes) else blob.encode("latin-1"))
        if name in ("unhexlify", "fromhex", "b16decode"):
            return binascii.unhexlify("".join(text.split()))
        decoder = getattr(base64, name)
        result: bytes = decoder(text)
        return result
    except (ValueError, binascii.Error):
        return None


def decoded(literal: str) -> str | None:
    """The text a string literal holds encoded (base64, hex, or zlib's own stream),
    when it decodes to printable text: a blob that `json.loads` or `eval` reads back at
    run time."""
    if len(literal) < MIN_BLOB_CHARS or len(literal) > MAX_BLOB_CHARS:
        return None
    raw = _compressed(literal) or _unencoded("".join(literal.split()))
    if not raw:
        return None
    if raw[:1] == _ZLIB_HEADER:
        raw = _inflated(raw) or raw
    text = raw.decode("latin-1")
    printable = sum(character.isprintable() or character in "\n\t\r" for character in text)
    return text if printable >= MIN_PRINTABLE_SHARE * len(text) else None


def _unencoded(compact: str) -> bytes | None:
    """The bytes a hex or base64 text stands for."""
    try:
        if _HEX.fullmatch(compact) and not compact.isdigit():
            return binascii.unhexlify(compact)
        if len(compact) % 4 == 0 and _BASE64.fullmatch(compact):
            return base64.b64decode(compact, validate=True)
    except (ValueError, binascii.Error):
        return None
    return None


def _compressed(literal: str) -> bytes | None:
    """What a bytes literal written as zlib's own stream (`b'x\\x9c...'`) inflates to."""
    if literal[:1] != "x" or literal[1:2] not in _ZLIB_LEVELS:
        return None
    try:
        return _inflated(literal.encode("latin-1"))
    except UnicodeEncodeError:
        return None


# The second byte of a zlib stream's header, by compression level.
_ZLIB_LEVELS = ("\x01", "\x5e", "\x9c", "\xda")


def _inflated(data: bytes) -> bytes | None:
    """`data` decompressed (zlib), at most `MAX_BLOB_CHARS` of it: a bomb stops there."""
    try:
        return zlib.decompressobj().decompress(data, MAX_BLOB_CHARS)
    except zlib.error:
        return None


def sequence_text(values: list[object]) -> str | None:
    """A list of small integers read as the text it spells: digits (`[5, 5]` is "55") or
    character codes (`[49, 48]` is "10"), as `"".join(map(str, ...))` or `chr` and
    `String.fromCharCode` make of it at run time; None for other lists."""
    numbers = [value for value in values if type(value) is int]
    if len(numbers) < 2 or len(numbers) != len(values):
        return None
    if all(0 <= number <= 9 for number in numbers):
        return "".join(map(str, numbers))
    if all(32 <= number <= 126 for number in numbers):
        return "".join(map(chr, numbers))
    return None


def unfold_c_like(program: str) -> str:
    """A C-like program's integers in other bases as decimals, digit separators
    (`6'227'020'800`, `362_880`) dropped, adjacent or added strings (`"36" "28"`,
    `"36" + "28"`) joined, and `a op b` between two integer literals as its value (a
    template literal's `${100 + 44}` included)."""
    if "0x" in program or "0X" in program or "0b" in program or "0B" in program:
        program = _C_OTHER_BASE.sub(_decimal, program)
    program = without_separators(program)
    program = _C_INTEGER_SUFFIX.sub("", program)
    if '"' in program:
        program = _C_JOINED_STRINGS.sub("", program)
    return _C_ARITHMETIC.sub(_arithmetic, program)


def written_folded(text: str) -> bool:
    """Whether `text` may hold literals written another way than they are read:
    arithmetic or repetition between literals, a reversed or decoded literal, a blob of
    base64 or hex. Words first (C's substring search), then two patterns that each
    start with a character class, which the regular expression engine skips to."""
    if any(word in text for word in _FOLDING_WORDS):
        return True
    return _LITERAL_ARITHMETIC.search(text) is not None or _BLOB.search(text) is not None


_FOLDING_WORDS = ("[::-1]", "decode(", "decompress", "fromhex", "unhexlify")
_LITERAL_ARITHMETIC = re.compile(r"[\d'\"][ \t]*+(?:[-+*/%^|&]|<<)[ \t]*+[\d'\"]")
_BLOB = re.compile(r"[\"'`][A-Za-z0-9+/]{16,}={0,2}[\"'`]")


def without_separators(text: str) -> str:
    """`text` without digit separators (`362_880`, `6'227'020'800`)."""
    return _C_SEPARATOR.sub("", text) if "_" in text or "'" in text else text


def _decimal(match: re.Match[str]) -> str:
    base = 16 if match.group(1) in "xX" else 2
    try:
        return str(int(match.group(2), base))
    except ValueError:
        return match.group()


def _arithmetic(match: re.Match[str]) -> str:
    left, sign, right = int(match.group(1)), match.group(3), int(match.group(4))
    value = left + right if sign == "+" else left - right if sign == "-" else left * right
    return str(value)
