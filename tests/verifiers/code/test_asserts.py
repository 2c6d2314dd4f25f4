"""Which assert tests run as values (`rlvr.verifiers.code.asserts`): only shapes whose
meaning a value judged outside the sandbox keeps (`rlvr.verifiers.code.pure`);
everything else stays a split test."""

from __future__ import annotations

import pytest

from rlvr.verifiers.code.asserts import check_calls, split_assert

CHECK = "def check(candidate):\n{body}\n"


def body(*lines: str) -> str:
    return "\n".join("    " + line for line in lines)


@pytest.mark.parametrize(
    ("test", "exprs", "judged"),
    [
        (CHECK.format(body=body("assert candidate(1) == 2")), ["f(1)"], ["candidate(1) == 2"]),
        (CHECK.format(body=body("assert 2 == candidate(1)")), ["f(1)"], ["2 == candidate(1)"]),
        (
            CHECK.format(body=body("assert candidate(1, 'a') == [1, (2,)], 'msg'")),
            ["f(1, 'a')"],
            ["candidate(1, 'a') == [1, (2,)]"],
        ),
        (
            CHECK.format(body=body('"""doc"""', "assert True", "assert candidate() == None")),
            ["f()"],
            ["candidate() == None"],
        ),
        (CHECK.format(body=body("assert candidate(-1.5) == {1: {2}}")), ["f(-1.5)"], ["candidate(-1.5) == {1: {2}}"]),
        (
            "METADATA = {'author': 'x'}\n\n" + CHECK.format(body=body("assert candidate(3) == 3")),
            ["f(3)"],
            ["candidate(3) == 3"],
        ),
        (
            '"""module doc"""\n' + CHECK.format(body=body("assert candidate([]) == []")),
            ["f([])"],
            ["candidate([]) == []"],
        ),
        (CHECK.format(body=body("assert candidate('\\u00e9\\n') == 'x'")), ["f('é\\n')"], ["candidate('é\\n') == 'x'"]),
        ("def check(c):\n    assert c(1) == 1\n    assert c(2) == 4\n", ["f(1)", "f(2)"], ["c(1) == 1", "c(2) == 4"]),
        # Judged in the grader on the returned value.
        (CHECK.format(body=body("assert candidate(1)")), ["f(1)"], ["candidate(1)"]),
        (CHECK.format(body=body("assert not candidate(1)")), ["f(1)"], ["not candidate(1)"]),
        (CHECK.format(body=body("assert candidate(1) is True")), ["f(1)"], ["candidate(1) is True"]),
        (CHECK.format(body=body("assert candidate(1) is not None")), ["f(1)"], ["candidate(1) is not None"]),
        (CHECK.format(body=body("assert candidate(1) != 2")), ["f(1)"], ["candidate(1) != 2"]),
        (CHECK.format(body=body("assert 1 < candidate(1) <= 2")), ["f(1)"], ["1 < candidate(1) <= 2"]),
        (CHECK.format(body=body("assert abs(candidate(1) - 2) < 1e-6")), ["f(1)"], ["abs(candidate(1) - 2) < 1e-06"]),
        (CHECK.format(body=body("assert round(candidate(1), 2) == 0.5")), ["f(1)"], ["round(candidate(1), 2) == 0.5"]),
        (CHECK.format(body=body("assert candidate(1)[0] == 2")), ["f(1)"], ["candidate(1)[0] == 2"]),
        (CHECK.format(body=body("assert candidate(1)[1:] == []")), ["f(1)"], ["candidate(1)[1:] == []"]),
        (CHECK.format(body=body("assert 'a' in candidate(1)")), ["f(1)"], ["'a' in candidate(1)"]),
        (CHECK.format(body=body("assert candidate(1) == 3 * 5 + 1")), ["f(1)"], ["candidate(1) == 3 * 5 + 1"]),
        (CHECK.format(body=body("assert candidate(1) or True")), ["f(1)"], ["candidate(1) or True"]),
        (CHECK.format(body=body("assert not candidate(1) and 1")), ["f(1)"], ["not candidate(1) and 1"]),
        (CHECK.format(body=body("assert 1 < candidate(1) < 3")), ["f(1)"], ["1 < candidate(1) < 3"]),
        (CHECK.format(body=body("assert candidate(1) % 2 == 0")), ["f(1)"], ["candidate(1) % 2 == 0"]),
        (CHECK.format(body=body("assert candidate(1) is False")), ["f(1)"], ["candidate(1) is False"]),
        (CHECK.format(body=body("assert (candidate(1),) == (1,)")), ["f(1)"], ["(candidate(1),) == (1,)"]),
        (CHECK.format(body=body("assert sum([candidate(1)]) == 1")), ["f(1)"], ["sum([candidate(1)]) == 1"]),
        # Constant arguments are sent as their source.
        (
            CHECK.format(body=body("assert candidate(3 * 19) == [3, 19]")),
            ["f(3 * 19)"],
            ["candidate(3 * 19) == [3, 19]"],
        ),
        (
            CHECK.format(body=body("assert candidate([1, 0**0]) == 1")),
            ["f([1, 0 ** 0])"],
            ["candidate([1, 0 ** 0]) == 1"],
        ),
        (
            CHECK.format(body=body("assert candidate('ab' + 'c') == 3")),
            ["f('ab' + 'c')"],
            ["candidate('ab' + 'c') == 3"],
        ),
        # A function that consumes an iterable gets the items the call returns.
        (CHECK.format(body=body("assert tuple(candidate(1)) == (1,)")), ["[*f(1)]"], ["tuple(candidate(1)) == (1,)"]),
        (CHECK.format(body=body("assert sorted(candidate(1)) == [1]")), ["[*f(1)]"], ["sorted(candidate(1)) == [1]"]),
        (CHECK.format(body=body("assert len(list(candidate(1))) == 1")), ["[*f(1)]"], ["len(list(candidate(1))) == 1"]),
        (CHECK.format(body=body("print", "assert candidate(1) == 1")), ["f(1)"], ["candidate(1) == 1"]),
        # `exit` and `quit` too: the zygote adds them, as `site` would.
        (CHECK.format(body=body("exit", "assert candidate(1) == 1")), ["f(1)"], ["candidate(1) == 1"]),
        (CHECK.format(body=body("quit", "assert candidate(1) == 1")), ["f(1)"], ["candidate(1) == 1"]),
    ],
)
def test_checks_of_calls_the_grader_can_judge_become_values(test: str, exprs: list[str], judged: list[str]) -> None:
    converted = check_calls(test, "f")
    assert converted is not None
    assert converted[0] == exprs
    assert [j.source for j in converted[1]] == judged


@pytest.mark.parametrize(
    "test",
    [
        CHECK.format(body=body("assert candidate(x) == 2")),  # a name, not a constant
        CHECK.format(body=body("assert candidate(*[1]) == 2")),
        CHECK.format(body=body("assert candidate(a=1) == 2")),
        CHECK.format(body=body("assert candidate(1) == candidate(2)")),
        CHECK.format(body=body("assert candidate(candidate(1)) == 2")),
        CHECK.format(body=body("assert candidate(1) == [i for i in range(2)]")),
        CHECK.format(body=body("assert candidate(1) == (lambda: 2)()")),
        CHECK.format(body=body("assert candidate(1) == (2 if True else 3)")),
        CHECK.format(body=body("assert candidate(1) == f'{2}'")),
        CHECK.format(body=body("assert candidate(1) == {**{1: 2}}")),
        CHECK.format(body=body("assert candidate(1) == [*[1]]")),
        CHECK.format(body=body("assert candidate(1) is 5")),  # identity of anything but a singleton
        CHECK.format(body=body("assert candidate(1) is candidate")),
        CHECK.format(body=body("assert candidate(1).real == 1")),
        CHECK.format(body=body("assert candidate(1) @ 2 == 1")),
        CHECK.format(body=body("assert candidate(1) << 2 == 1")),
        CHECK.format(body=body("assert candidate(1) & 2 == 1")),
        CHECK.format(body=body("assert ~candidate(1) == 1")),
        # What split mode would ask the program's own object for.
        CHECK.format(body=body("assert len(candidate(1)) == 1")),
        CHECK.format(body=body("assert str(candidate(1)) == '1'")),
        CHECK.format(body=body("assert int(candidate(1)) == 1")),
        CHECK.format(body=body("assert float(candidate(1)) == 1.0")),
        CHECK.format(body=body("assert bool(candidate(1))")),
        CHECK.format(body=body("assert sorted(candidate(1), key=abs) == [1]")),
        CHECK.format(body=body("assert min(candidate(1), 3) == 1")),
        CHECK.format(body=body("assert candidate(1) == 2 and candidate(2) == 3")),
        CHECK.format(body=body("assert other(1) == 2")),
        CHECK.format(body=body("assert math.floor(candidate(1)) == 2")),
        CHECK.format(body=body("assert candidate(1) == open('x').read()")),
        CHECK.format(body=body("assert candidate(1) == __import__('os').getpid()")),
        CHECK.format(body=body("x = 1", "assert candidate(x) == 2")),
        CHECK.format(body=body("for i in range(3):", "    assert candidate(i) == i")),
        CHECK.format(body=body("import math", "assert candidate(1) == 2")),
        CHECK.format(body=body("print(1)", "assert candidate(1) == 2")),
        CHECK.format(body=body("undefined_name", "assert candidate(1) == 2")),
        CHECK.format(body=body("candidate(1)", "assert candidate(1) == 2")),
        CHECK.format(body=body("assert True")),  # no call at all
        CHECK.format(body=body('"""only a docstring"""')),
        # An argument the job would evaluate among the program's names.
        CHECK.format(body=body("assert candidate(len('ab')) == 4")),
        CHECK.format(body=body("assert candidate(sorted([2, 1])) == 3")),
        CHECK.format(body=body("assert candidate([abs(-1)]) == 3")),
        # A call Python may skip: the assert could pass without it, and a later call of
        # a program that keeps state would answer differently.
        CHECK.format(body=body("assert 1 or candidate(0)")),
        CHECK.format(body=body("assert True and candidate(0)")),
        CHECK.format(body=body("assert False or not candidate(0)")),
        CHECK.format(body=body("assert 1 < 2 < candidate(0)")),
        CHECK.format(body=body("assert 1 < 2 == (candidate(0) == 3)")),
        CHECK.format(body=body("assert (1 or candidate(0)) == 1")),
        # Consumers that may stop early.
        CHECK.format(body=body("assert all(candidate(1))")),
        CHECK.format(body=body("assert any(candidate(1))")),
        # Formatting: the value could size the result.
        CHECK.format(body=body("assert '%s' % candidate(1) == 'x'")),
        CHECK.format(body=body("assert b'%d' % candidate(1) == b'1'")),
        CHECK.format(body=body("assert '%s!' % (candidate(1),) == '1!'")),
        # `is` with anything but the singletons themselves (0 == False, 1 == True).
        CHECK.format(body=body("assert candidate(1) is 0")),
        CHECK.format(body=body("assert candidate(1) is 1")),
        CHECK.format(body=body("assert candidate(1) is 0.0")),
        CHECK.format(body=body("assert candidate(1) is not 1.0")),
        CHECK.format(body=body("assert candidate(1) is 0j")),
        # Modules whose check fails whatever the program.
        CHECK.format(body=body("assert candidate(1) == 2")) + "check = None\n",
        CHECK.format(body=body("assert candidate(1) == 2")) + "f = 0\n",
        "__builtins__ = {}\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "__name__ = 'x'\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "def check(candidate: 1 / 0):\n    assert candidate(1) == 2\n",
        "def check(candidate) -> 1 / 0:\n    assert candidate(1) == 2\n",
        # A builtin the test half of a split job does not have (it runs without `site`,
        # and has only its `exit` and `quit`).
        CHECK.format(body=body("help", "assert candidate(1) == 2")),
        CHECK.format(body=body("credits", "assert candidate(1) == 2")),
        # A name the grader evaluates means something else in the check.
        "sorted = 5\n" + CHECK.format(body=body("assert sorted(candidate(1)) == [1]")),
        "abs = 0\n" + CHECK.format(body=body("assert abs(candidate(1) - 2) < 1e-6")),
        "def check(len):\n    assert len(1) == 2\n",
        "def check(abs):\n    assert abs(1) == 2\n",
        "def check(candidate, extra):\n    assert candidate(1) == 2\n",
        "def check(candidate=None):\n    assert candidate(1) == 2\n",
        "def check(*candidate):\n    assert candidate(1) == 2\n",
        "@decorated\ndef check(candidate):\n    assert candidate(1) == 2\n",
        "def verify(candidate):\n    assert candidate(1) == 2\n",
        CHECK.format(body=body("assert candidate(1) == 2")) * 2,  # two checks
        "import math\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "helper = lambda: 2\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "LIMIT = compute()\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "a.b = 1\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "def helper():\n    return 2\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "check(f)\n" + CHECK.format(body=body("assert candidate(1) == 2")),
        "def check(candidate):\n    assert candidate(1 == 2",
        "def check(candidate):\n" + "    assert candidate(" + "[" * 300 + "]" * 300 + ") == 1\n",
        "",
    ],
)
def test_anything_else_stays_a_split_test(test: str) -> None:
    assert check_calls(test, "f") is None


@pytest.mark.parametrize("entry_point", ["max", "sorted", "abs", "len", "round"])
def test_an_entry_point_named_like_a_function_the_grader_calls_stays_split(entry_point: str) -> None:
    """In split mode the check's `max` is the program's entry point; the grader's would
    be the builtin."""
    assert check_calls(CHECK.format(body=body("assert candidate([1, 2]) != max([3, 4])")), entry_point) is None


@pytest.mark.parametrize(
    ("test", "split"),
    [
        ("assert f(1) == 2", ("f(1)", 2)),
        ("assert 2 == f(1)", ("f(1)", 2)),
        ("assert f(x) == [1, 'a']", ("f(x)", [1, "a"])),
        ("assert f(1)", None),
        ("assert f(1) == g(2)", None),
        ("x = 1", None),
        ("assert f(1) == 2\nassert f(2) == 3", None),
        ("assert f(1 ==", None),
    ],
)
def test_single_asserts(test: str, split: tuple[str, object] | None) -> None:
    assert split_assert(test) == split
