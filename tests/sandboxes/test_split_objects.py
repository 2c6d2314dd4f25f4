"""Split jobs: tests that build and read the program's own objects (issue 30, class 6).

The class: MBPP tests that build a tree of the program's `Node` (`root.left =
Node(2)`) and call the entry point on it failed in split mode with "'Remote' object
has no attribute 'left'": correct programs scored 0 for how the split runner proxies
their objects. A proxy now takes attribute sets, truth values, `str`, indexing and
comparisons with another program object; and still never stands in for a value of the
test half's (the program's `__eq__` does not run against one).
"""

from __future__ import annotations

import pytest

from rlvr.sandboxes.local.sandbox import LocalSandbox
from tests.sandboxes.test_split_trust import run_split, statuses

TREE = (
    "class Node:\n"
    "    def __init__(self, data):\n"
    "        self.data = data\n"
    "        self.left = None\n"
    "        self.right = None\n"
    "def max_height(node):\n"
    "    if node is None:\n"
    "        return 0\n"
    "    return 1 + max(max_height(node.left), max_height(node.right))\n"
)
LINKED = (
    "class ListNode:\n"
    "    def __init__(self, val, next=None):\n"
    "        self.val = val\n"
    "        self.next = next\n"
    "    def __eq__(self, other):\n"
    "        return isinstance(other, ListNode) and self.val == other.val and self.next == other.next\n"
    "    def __str__(self):\n"
    "        return f'{self.val}->{self.next}'\n"
    "def build(xs):\n"
    "    head = None\n"
    "    for x in reversed(xs):\n"
    "        head = ListNode(x, head)\n"
    "    return head\n"
    "def reverse(head):\n"
    "    prev = None\n"
    "    while head:\n"
    "        head.next, prev, head = prev, head, head.next\n"
    "    return prev\n"
)

TREE_TESTS = [
    "root = Node(1)\nroot.left = Node(2)\nroot.right = Node(3)\nroot.left.left = Node(4)\nassert max_height(root) == 3",
    "root = Node(1)\nassert max_height(root) == 1 and root.left is None and root.data == 1",
    "root = Node(5)\nroot.left = Node(6)\nassert root.left.data == 6 and root.left is root.left",
    "root = Node(5)\nroot.data = 7\nassert root.data == 7",
    "root = Node(1)\nif root:\n    pass\nassert max_height(None) == 0",
]
LINKED_TESTS = [
    "out = []\nnode = reverse(build([1, 2, 3]))\nwhile node:\n    out.append(node.val)\n    node = node.next\n"
    "assert out == [3, 2, 1]",
    "assert reverse(build([1, 2])) == build([2, 1])",
    "assert reverse(build([1, 2])) != build([1, 2])",
    "assert str(reverse(build([1, 2]))) == '2->1->None'",
    "head = build([1])\nhead.next = ListNode(2)\nassert head.next.val == 2",
]


def test_a_tree_of_the_program_s_nodes(sb: LocalSandbox) -> None:
    assert statuses(run_split(sb, TREE, TREE_TESTS)) == ["pass"] * len(TREE_TESTS)


def test_a_linked_list_of_the_program_s_nodes(sb: LocalSandbox) -> None:
    assert statuses(run_split(sb, LINKED, LINKED_TESTS)) == ["pass"] * len(LINKED_TESTS)


def test_a_wrong_program_over_its_own_objects_still_fails(sb: LocalSandbox) -> None:
    wrong = TREE.replace("return 1 + max(", "return 1 + min(")
    assert statuses(run_split(sb, wrong, TREE_TESTS[:1])) == ["fail"]
    broken = LINKED.replace("    return prev\n", "    return build([0])\n")
    assert statuses(run_split(sb, broken, LINKED_TESTS[:1] + LINKED_TESTS[3:4])) == ["fail", "fail"]


# A program object whose class claims to equal, be, or print as anything.
LIAR = (
    "class Liar:\n"
    "    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n"
    "    def __bool__(self):\n        return 1\n"
    "    def __str__(self):\n        return Liar()\n"
    "    def __len__(self):\n        return 10**30\n"
    "    def __getattr__(self, name):\n        return Liar()\n"
    "def f(*a):\n    return Liar()\n"
)


@pytest.mark.parametrize(
    "test",
    [
        "assert f() == 3",
        "assert 3 == f()",
        "assert f() == [1, 2]",
        "assert [f()] == [3]",
        "assert f() in (3, 4)",
        "assert not (f() != 3)",
        "assert {'k': f()} == {'k': 3}",
        "assert f().value == 3",
        "assert f()",
        "assert str(f()) == 'x'",
        "assert len(f()) == 10**30",
        "assert f() == f().other",
    ],
)
def test_a_program_object_never_stands_in_for_a_value(sb: LocalSandbox, test: str) -> None:
    """Equal to nothing of the tests' own; its truth value and `str` must be a bool and
    a str. Two program objects compare as the program says (the last case): that test
    rests on the program's class, which the verifier reports."""
    expected = "pass" if test == "assert f() == f().other" else "fail_or_error"
    status = statuses(run_split(sb, LIAR, [test]))[0]
    assert status == expected if expected == "pass" else status in ("fail", "error"), status
