"""`folding`: what a program's literals stand for when written another way, within
bounds a hostile program cannot stretch."""

from __future__ import annotations

import ast
import base64
import zlib

import pytest

from rlvr.verifiers.code.atoms import literal_atoms
from rlvr.verifiers.code.folding import (
    MAX_BLOB_CHARS,
    MAX_FOLD_BITS,
    decoded,
    fold,
    hints,
    int_list,
    sequence_text,
    unfold_c_like,
    written_folded,
)


def _fold(source: str) -> object:
    return fold(ast.parse(source, mode="eval").body)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("143 + 1", 144),
        ("12 * 12", 144),
        ("2 ** 4 * 9", 144),
        ("-(-144)", 144),
        ("~~144", 144),
        ("289 // 2", 144),
        ("1 << 4", 16),
        ("'44' + '1'", "441"),
        ("'441'[::-1]", "144"),
        ("b'441'[::-1]", b"144"),
        ("'ab' * 3", "ababab"),
        ("base64.b64decode('MTQ0')", b"144"),
        ("b64decode('MTQ0').decode()", "144"),
        ("bytes.fromhex('313434')", b"144"),
        ("binascii.unhexlify('313434')", b"144"),
        ("1.5 * 2", 3.0),
        ("55 / 3", 55 / 3),
        ("zlib.decompress(base64.b64decode('eJwzNFIwNDFRMDZXMDQ2swQAEw4Cmg=='))", b"12 144 37 1369"),
    ],
)
def test_expressions_of_literals_fold_to_their_value(source: str, value: object) -> None:
    assert _fold(source) == value


@pytest.mark.parametrize(
    "source",
    [
        "x + 1",
        "2 ** 100000",  # past the exponent bound
        "(2 ** 64) ** 64",  # past the size bound
        "'ab' * 100000",
        "1 // 0",
        "'a' - 'b'",
        "'441'[::2]",
        "b64decode(x)",
        "b64decode('not base64!')",
        "len('abc')",
    ],
)
def test_what_is_not_made_of_literals_or_is_too_big_does_not_fold(source: str) -> None:
    assert _fold(source) is None


def test_folded_integers_stay_within_their_bound() -> None:
    value = _fold("2 ** 64 * 2 ** 64 * 2 ** 64")
    assert isinstance(value, int) and value.bit_length() <= MAX_FOLD_BITS
    assert _fold("2 ** 64 * 2 ** 64 * 2 ** 64 * 2 ** 64") is None


def test_deep_expressions_fold_only_to_a_bounded_depth() -> None:
    # A chain deeper than Python's own recursion limit parses, and is read without
    # recursing through it.
    for source in ("x = y" + " + 1" * 2900, "x = 1" + " + 1" * 2900, "x = " + "-" * 2900 + "1"):
        assert len(literal_atoms(source, "python")) <= 2901


def test_blobs_decode_only_to_printable_text() -> None:
    assert decoded(base64.b64encode(b'{"12": 144, "37": 1369}').decode()) == '{"12": 144, "37": 1369}'
    assert decoded(b'{"12": 144, "37": 1369}'.hex()) == '{"12": 144, "37": 1369}'
    assert decoded("abcdefghijklmnopqrstuvwxyz") is None  # a word, not a blob
    assert decoded("1234567890123456") is None  # digits are a number
    assert decoded(base64.b64encode(bytes(range(32))).decode()) is None  # noise
    assert decoded("MTQ0") is None  # too short to tell


@pytest.mark.parametrize(
    ("program", "unfolded"),
    [
        ("m = {{0xc, 0x90}};", "m = {{12, 144}};"),
        ("int b = 0b1010;", "int b = 10;"),
        ("x = ${100 + 44};", "x = ${144};"),
        ("x = 143+1;", "x = 144;"),
        ('cout << "1 -1";', 'cout << "1 -1";'),  # two numbers, not a difference
        ("y = a[2] - 1 + n * 3;", "y = a[2] - 1 + n * 3;"),  # names bind them
        ("z = 2 * 3 + 1;", "z = 6 + 1;"),
        ("t = 0x1g;", "t = 0x1g;"),
    ],
)
def test_c_like_text_is_unfolded_where_literals_meet(program: str, unfolded: str) -> None:
    assert unfold_c_like(program) == unfolded


def test_hints_read_what_the_text_shows_written_another_way() -> None:
    blob = base64.b64encode(b"12 144 37 1369").decode()
    found = hints(f"T = {{12: 143 + 1, 37: '9631'[::-1], 58: 2**10}}\nB = '{blob}'\n").split()
    assert found == ["144", "1024", "1369", "12", "144", "37", "1369"]


def test_hostile_text_is_unfolded_in_one_pass() -> None:
    for text in ("1+" * 100_000, "0x" * 100_000, "'" + "A" * 100_000 + "'", "'a'[::-1]" * 20_000):
        assert isinstance(unfold_c_like(text), str)
        assert isinstance(hints(text), str)


def test_compressed_blobs_decode_within_their_bound() -> None:
    packed = base64.b64encode(zlib.compress(b'{"12": 144, "37": 1369}')).decode()
    assert decoded(packed) == '{"12": 144, "37": 1369}'
    bomb = base64.b64encode(zlib.compress(b"7" * (50 * MAX_BLOB_CHARS))).decode()
    assert len(decoded(bomb) or "") <= MAX_BLOB_CHARS


@pytest.mark.parametrize(
    ("source", "values", "text"),
    [
        ("[49, 48, 49, 48]", [49, 48, 49, 48], "1010"),
        ("(5, 5)", [5, 5], "55"),
        ("[49] + [48] * 3", [49, 48, 48, 48], "1000"),
        ("[300, 400]", [300, 400], None),
        ("[7]", [7], None),
        ("[1, 'a']", None, None),
        ("[0] * 100000", None, None),
    ],
)
def test_lists_of_small_numbers_spell_text(source: str, values: list[object] | None, text: str | None) -> None:
    found = int_list(ast.parse(source, mode="eval").body)
    assert found == values
    assert (None if found is None else sequence_text(found)) == text


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("return {2: 143 + 1}[n]", True),
        ("x = 'ab' * 3", True),
        ("return '441'[::-1]", True),
        ("bytes.fromhex(TABLE)", True),
        ("zlib.decompress(blob)", True),
        ("base64.b64decode(s).decode()", True),
        ("t = 'aGVsbG8gd29ybGQgaGVsbG8='", True),
        ("return 1 << 20", True),
        ("return n << 2", False),
        ("for i in range(1, n + 1):\n    total += i * i", False),
        ("return s[::2] + 'x'", False),
        ("", False),
    ],
)
def test_literals_written_another_way_are_noticed(text: str, folded: bool) -> None:
    assert written_folded(text) is folded
