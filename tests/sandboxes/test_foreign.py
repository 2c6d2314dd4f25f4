"""`runner.foreign`: the class a returned value brings its own comparison in, named for
the `custom_equality` signal; the standard library's and numpy's values are not."""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest

from rlvr.sandboxes.runner.foreign import MAX_SCANNED, foreign_type


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class LyingInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class IndexInt(int):
    def __index__(self) -> int:
        return 4


class LyingList(list[int]):
    def __eq__(self, other: object) -> bool:
        return True


class PlainSubclass(int):
    pass


class Node:
    def __init__(self) -> None:
        self.next = None


class Colour(enum.IntEnum):
    RED = 1


@dataclasses.dataclass
class Point:
    x: int


Pair = namedtuple("Pair", "a b")


class Wrapper(tuple[Any, ...]):
    pass


class NamedLikeNumpy(int):
    """Names a trusted module as its own: trust goes by what a class is, not its name."""

    __module__ = "numpy"

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class Meta(type):
    @property
    def __mro__(cls) -> Any:  # type: ignore[override]
        raise RuntimeError("a metaclass that lies about its bases")


class Sneaky(int, metaclass=Meta):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (AlwaysEqual(), "AlwaysEqual"),
        (LyingInt(3), "LyingInt"),
        (IndexInt(3), "IndexInt"),
        (LyingList([1]), "LyingList"),
        ([1, {"a": (2, LyingInt(1))}], "LyingInt"),
        ({LyingInt(1): 2}, "LyingInt"),
        (frozenset({LyingInt(5)}), "LyingInt"),
        (Point(1), "Point"),  # a dataclass writes its own __eq__
        (Sneaky(1), "Sneaky"),
        (Wrapper((1, AlwaysEqual())), "AlwaysEqual"),  # inside a subclass with no override
        (OrderedDict(a=LyingInt(1)), "LyingInt"),
        (Counter({LyingInt(2): 1}), "LyingInt"),
        (Pair(1, AlwaysEqual()), "AlwaysEqual"),
        (NamedLikeNumpy(1), "NamedLikeNumpy"),
        (deque([1, AlwaysEqual()]), "AlwaysEqual"),  # a C container holding one
        ([deque([deque([LyingInt(2)])])], "LyingInt"),
    ],
)
def test_a_class_with_its_own_comparison_is_named(value: Any, name: str) -> None:
    assert foreign_type(value) == name


@pytest.mark.parametrize(
    "value",
    [
        1,
        "s",
        None,
        [1, "a", {"b": 2.0}, (3, 4j), {5}, b"x"],
        Counter("abc"),
        defaultdict(int, a=1),
        OrderedDict(a=1),
        deque([1]),
        Pair(1, 2),
        Fraction(1, 3),
        Decimal("1.5"),
        Colour.RED,
        PlainSubclass(3),
        Node(),  # no comparison of its own: `wire` refuses it as not plain data
    ],
)
def test_plain_and_standard_values_are_not(value: Any) -> None:
    assert foreign_type(value) is None


def test_numpy_values_are_not() -> None:
    numpy = pytest.importorskip("numpy")
    assert foreign_type([numpy.int64(3), numpy.arange(3)]) is None


def test_the_scan_is_bounded() -> None:
    hidden = [*range(10 * MAX_SCANNED), AlwaysEqual()]
    assert foreign_type(hidden) is None
    assert foreign_type([AlwaysEqual(), *range(10 * MAX_SCANNED)]) == "AlwaysEqual"


def test_a_numpy_array_of_objects_is_read_for_its_values() -> None:
    numpy = pytest.importorskip("numpy")
    assert foreign_type(numpy.array([1, AlwaysEqual()], dtype=object)) == "AlwaysEqual"
    assert foreign_type(numpy.array([[1, 2], [3, LyingInt(4)]], dtype=object)) == "LyingInt"
    assert foreign_type(numpy.arange(6).reshape(2, 3)) is None
