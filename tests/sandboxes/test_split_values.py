"""Split jobs: the standard library's and numpy's values cross between the halves as
themselves, generators stay lazy, and arguments changed in place are changed in the
tests too (issue 30, class 6: correct programs scored 0 for how the split runner
carried their values). Each correct case has wrong programs beside it that must
still fail: the test half rebuilds every value with its own constructors, so a
subclass with a lying `__eq__` never stands in for an expected value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rlvr.sandboxes.local.sandbox import LocalSandbox
from rlvr.sandboxes.runner import wire
from tests.sandboxes.test_split_trust import run_split, statuses

# name: (program, tests that a correct program passes)
RETURNS: dict[str, tuple[str, list[str]]] = {
    "fraction": (
        "from fractions import Fraction\ndef f(a, b):\n    return Fraction(a, b)\n",
        ["from fractions import Fraction\nassert f(1, 2) == Fraction(1, 2) and type(f(2, 4)) is Fraction"],
    ),
    "decimal": (
        "from decimal import Decimal\ndef f(s):\n    return Decimal(s) + 1\n",
        ["from decimal import Decimal\nassert f('0.5') == Decimal('1.5') and str(f('0.50')) == '1.50'"],
    ),
    "deque": (
        "from collections import deque\ndef f(n):\n    return deque(range(n), maxlen=n)\n",
        [
            "from collections import deque\nd = f(2)\nassert d == deque([0, 1]) and d.maxlen == 2\n"
            "d.append(5)\nassert list(d) == [1, 5]"
        ],
    ),
    "namedtuple": (
        "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f(a):\n    return P(a, a + 1)\n",
        ["p = f(1)\nassert p.x == 1 and p.y == 2 and p == (1, 2) and type(p).__name__ == 'P'"],
    ),
    "counter": (
        "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
        [
            "from collections import Counter\nc = f('aab')\n"
            "assert c.most_common(1) == [('a', 2)] and c == Counter(a=2, b=1)"
        ],
    ),
    "defaultdict": (
        "from collections import defaultdict\ndef f():\n    d = defaultdict(list)\n"
        "    d['a'].append(1)\n    return d\n",
        ["d = f()\nassert d['a'] == [1] and d['b'] == [] and set(d) == {'a', 'b'}"],
    ),
    "ordereddict": (
        "from collections import OrderedDict\ndef f():\n    return OrderedDict([('b', 1), ('a', 2)])\n",
        ["d = f()\nd.move_to_end('b')\nassert list(d) == ['a', 'b']"],
    ),
    "datetime": (
        "import datetime as dt\ndef f(y):\n"
        "    return dt.date(y, 1, 2), dt.datetime(y, 1, 2, 3, tzinfo=dt.timezone.utc), "
        "dt.time(4, 5), dt.timedelta(days=1, seconds=3)\n",
        [
            "import datetime\nd, t, c, delta = f(2020)\n"
            "assert d == datetime.date(2020, 1, 2) and d.weekday() == 3\n"
            "assert t == datetime.datetime(2020, 1, 2, 3, tzinfo=datetime.timezone.utc) and c == datetime.time(4, 5)\n"
            "assert delta.total_seconds() == 86403"
        ],
    ),
    "range_bytearray": (
        "def f(n):\n    return range(1, n, 2), bytearray(b'ab')\n",
        ["r, b = f(6)\nassert r == range(1, 6, 2) and b == bytearray(b'ab') and type(b) is bytearray"],
    ),
    "numpy": (
        "import numpy as np\ndef f(n):\n    return np.arange(n * n, dtype=np.int32).reshape(n, n), np.float32(0.5)\n",
        [
            "import numpy as np\na, s = f(3)\nassert a.shape == (3, 3) and a.sum() == 36 and a.dtype == np.int32\n"
            "assert s.dtype == np.float32 and s == 0.5\nnp.testing.assert_array_equal(a[0], [0, 1, 2])"
        ],
    ),
    "pandas": (
        "import pandas as pd\ndef f():\n"
        "    return pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}), pd.Series([1.5], name='s')\n",
        [
            "import pandas as pd\ndf, s = f()\n"
            "pd.testing.assert_frame_equal(df, pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}))\n"
            "pd.testing.assert_series_equal(s, pd.Series([1.5], name='s'))"
        ],
    ),
    "generator": (
        "import itertools\ndef f(n):\n    yield from range(n)\ndef naturals():\n    return itertools.count()\n",
        [
            "g = f(3)\nassert next(g) == 0 and list(g) == [1, 2] and iter(g) is g",
            "assert [x for x in f(2)] == [0, 1] and sum(f(4)) == 6",
            "g = naturals()\nassert [next(g) for _ in range(3)] == [0, 1, 2]\nfor x in g:\n"
            "    if x > 5:\n        break\nassert x == 6",
            "g = f(1)\nnext(g)\ntry:\n    next(g)\nexcept StopIteration:\n    pass\nelse:\n    assert False",
        ],
    ),
}

ARGUMENTS: dict[str, tuple[str, list[str]]] = {
    "numpy": (
        "def norm(a):\n    return (a / a.sum()).tolist(), a.shape\n",
        ["import numpy as np\nassert norm(np.array([1.0, 3.0])) == ([0.25, 0.75], (2,))"],
    ),
    "pandas": (
        "def rows(df):\n    return len(df), list(df.columns)\n",
        ["import pandas as pd\nassert rows(pd.DataFrame({'a': [1, 2]})) == (2, ['a'])"],
    ),
    "fraction": (
        "def half(x):\n    return x / 2\n",
        ["from fractions import Fraction\nassert half(Fraction(1, 2)) == Fraction(1, 4)"],
    ),
    "deque": (
        "def rot(d):\n    d.rotate(1)\n    return list(d)\n",
        ["from collections import deque\nassert rot(deque([1, 2, 3])) == [3, 1, 2]"],
    ),
    "range": ("def total(xs):\n    return sum(xs), len(xs)\n", ["assert total(range(5)) == (10, 5)"]),
    "generator": (
        "def first(xs):\n    return next(xs), list(xs)\n",
        ["assert first(x * 2 for x in [1, 2, 3]) == (2, [4, 6])"],
    ),
    "date": (
        "def later(d, delta):\n    return d + delta\n",
        ["import datetime as dt\nassert later(dt.date(2020, 1, 31), dt.timedelta(1)) == dt.date(2020, 2, 1)"],
    ),
}

IN_PLACE: dict[str, tuple[str, list[str]]] = {
    "list": (
        "def push(xs, x=3):\n    xs.append(x)\n",
        ["xs = [1]\npush(xs)\nassert xs == [1, 3]", "xs = [1]\npush(xs=xs, x=4)\nassert xs == [1, 4]"],
    ),
    "set_dict": (
        "def add(s, d):\n    s.add(3)\n    d['k'] = 1\n",
        ["s, d = {1}, {}\nadd(s, d)\nassert s == {1, 3} and d == {'k': 1}"],
    ),
    "nested": (
        "def zero_first(grid):\n    grid[0][0] = 0\n    grid.append([9])\n",
        [
            "grid = [[1, 2], [3, 4]]\nrow = grid[0]\nzero_first(grid)\n"
            "assert grid == [[0, 2], [3, 4], [9]] and row is grid[0] and row == [0, 2]"
        ],
    ),
    "leetcode": (
        "def sortColors(nums):\n    nums.sort()\n"
        "def rotate(nums, k):\n    k %= len(nums)\n    nums[:] = nums[-k:] + nums[:-k]\n"
        "def moveZeroes(nums):\n    nz = [x for x in nums if x]\n    nums[:] = nz + [0] * (len(nums) - len(nz))\n"
        "def reverseString(s):\n    s.reverse()\n",
        [
            "nums = [2, 0, 1]\nassert sortColors(nums) is None\nassert nums == [0, 1, 2]",
            "nums = [1, 2, 3, 4]\nrotate(nums, 1)\nassert nums == [4, 1, 2, 3]",
            "nums = [0, 1, 0, 3]\nmoveZeroes(nums)\nassert nums == [1, 3, 0, 0]",
            "s = list('ab')\nreverseString(s)\nassert s == ['b', 'a']",
        ],
    ),
    "numpy_bytearray_deque": (
        "def bump(a, b, d):\n    a += 1\n    b[0] = 120\n    d.appendleft(0)\n",
        [
            "import numpy as np\nfrom collections import deque\n"
            "a, b, d = np.zeros(2), bytearray(b'ab'), deque([1])\nbump(a, b, d)\n"
            "assert a.tolist() == [1.0, 1.0] and b == bytearray(b'xb') and d == deque([0, 1])"
        ],
    ),
    "alias": ("def double(a, b):\n    a.extend(b)\n", ["xs = [1, 2]\ndouble(xs, xs)\nassert xs == [1, 2, 1, 2]"]),
}


def _cases(table: dict[str, tuple[str, list[str]]]) -> list[Any]:
    return [pytest.param(code, tests, id=name) for name, (code, tests) in table.items()]


@pytest.mark.parametrize(("code", "tests"), _cases(RETURNS) + _cases(ARGUMENTS) + _cases(IN_PLACE))
def test_a_correct_program_passes(sb: LocalSandbox, code: str, tests: list[str]) -> None:
    assert statuses(run_split(sb, code, tests)) == ["pass"] * len(tests)


# (program, test): a wrong answer, or a value of the program's own type that claims to
# equal anything; each must fail.
LIAR_EQ = "    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
WRONG: dict[str, tuple[str, str]] = {
    "fraction_off_by_one": (
        "from fractions import Fraction\ndef f():\n    return Fraction(3, 2)\n",
        "from fractions import Fraction\nassert f() == Fraction(1, 2)",
    ),
    "fraction_subclass": (
        f"from fractions import Fraction\nclass F(Fraction):\n{LIAR_EQ}def f():\n    return F(7)\n",
        "from fractions import Fraction\nassert f() == Fraction(1, 2)",
    ),
    "decimal_subclass": (
        f"from decimal import Decimal\nclass D(Decimal):\n{LIAR_EQ}def f():\n    return D(7)\n",
        "from decimal import Decimal\nassert f() == Decimal('1.5')",
    ),
    "counter_wrong_count": (
        "from collections import Counter\ndef f():\n    return Counter(a=1)\n",
        "from collections import Counter\nassert f() == Counter(a=2)",
    ),
    "counter_subclass": (
        f"from collections import Counter\nclass C(Counter):\n{LIAR_EQ}def f():\n    return C(b=5)\n",
        "from collections import Counter\nassert f() == Counter(a=2)",
    ),
    "deque_subclass": (
        f"from collections import deque\nclass Q(deque):\n{LIAR_EQ}def f():\n    return Q([9])\n",
        "from collections import deque\nassert f() == deque([1])",
    ),
    "namedtuple_liar": (
        f"from collections import namedtuple\nclass P(namedtuple('P', 'x y')):\n{LIAR_EQ}def f():\n"
        "    return P(9, 9)\n",
        "assert f() == (1, 2)",
    ),
    "date_wrong": (
        "import datetime\ndef f():\n    return datetime.date(2020, 1, 3)\n",
        "import datetime\nassert f() == datetime.date(2020, 1, 2)",
    ),
    "numpy_wrong": (
        "import numpy as np\ndef f():\n    return np.array([1, 3])\n",
        "import numpy as np\nassert (f() == np.array([1, 2])).all()",
    ),
    "pandas_wrong": (
        "import pandas as pd\ndef f():\n    return pd.DataFrame({'a': [1, 3]})\n",
        "import pandas as pd\npd.testing.assert_frame_equal(f(), pd.DataFrame({'a': [1, 2]}))",
    ),
    "generator_wrong_value": ("def f():\n    yield 1\n    yield 5\n", "g = f()\nassert next(g) == 1 and next(g) == 2"),
    "generator_too_short": ("def f():\n    yield 1\n", "g = f()\nassert next(g) == 1 and next(g) == 2"),
    "mutation_wrong": ("def push(xs):\n    xs.append(4)\n", "xs = [1]\npush(xs)\nassert xs == [1, 3]"),
    "mutation_missing": ("def push(xs):\n    xs = xs + [3]\n", "xs = [1]\npush(xs)\nassert xs == [1, 3]"),
    "mutation_unexpected": (
        "def size(xs):\n    xs.clear()\n    return 0\n",
        "xs = [1]\nassert size(xs) == 0 and xs == [1]",
    ),
    "mutation_liar_element": (
        f"class L:\n{LIAR_EQ}def push(xs):\n    xs.append(L())\n",
        "xs = [1]\npush(xs)\nassert xs == [1, 3]",
    ),
}


@pytest.mark.parametrize(("code", "test"), [pytest.param(c, t, id=n) for n, (c, t) in WRONG.items()])
def test_a_wrong_program_fails(sb: LocalSandbox, code: str, test: str) -> None:
    assert statuses(run_split(sb, code, [test]))[0] in ("fail", "error")


# A correct program that first rebinds what a reporting channel would use.
CLOBBERS = {
    "json_struct": "import json, struct, _json\njson.dumps = json.loads = None\n"
    "json.encoder.encode_basestring_ascii = None\n"
    "struct.pack = struct.unpack = None\n_json.make_encoder = _json.make_scanner = None\n",
    "builtin_subclasses": "import builtins\nfor name in ('int', 'list', 'dict', 'str', 'tuple'):\n"
    "    setattr(builtins, name, type(name, (getattr(builtins, name),), {}))\n"
    "_type, _isinstance = type, isinstance\nbuiltins.type = lambda *a: _type(*a)\n"
    "builtins.isinstance = lambda *a: _isinstance(*a)\n",
    "builtins_none": "import builtins\n"
    "for name in ('len', 'isinstance', 'type', 'str', 'int', 'list', 'dict', 'iter', 'next', 'any', "
    "'all', 'getattr', 'hasattr', 'id', 'hash', 'repr', 'bool', 'tuple', 'enumerate', 'min', 'issubclass', "
    "'setattr'):\n"
    "    setattr(builtins, name, None)\n",
}


@pytest.mark.parametrize("header", CLOBBERS.values(), ids=list(CLOBBERS))
def test_a_program_cannot_break_its_own_reporting(sb: LocalSandbox, header: str) -> None:
    # What the program itself needs from them it takes before: the clobber is its own.
    code = "from fractions import Fraction\nHALF = Fraction(1, 2)\n" + header
    code += "def f(xs):\n    xs.append(3)\n    return [HALF, {'k': (1,)}]\n"
    tests = [
        "from fractions import Fraction\nxs = [1]\nassert f(xs) == [Fraction(1, 2), {'k': (1,)}] and xs == [1, 3]",
        "assert f([]) == [0]",
    ]
    assert statuses(run_split(sb, code, tests)) == ["pass", "fail"]


# ---------------------------------------------------------------- the wire itself

FORGED = [
    ["F", [1, 0]],
    ["F", [1.5, 2]],
    ["D", 5],
    ["D", "not a number"],
    ["dq", [[1], -1]],
    ["dd", ["os.system", []]],
    ["nt", ["P", ["x", "x"], [1, 2]]],
    ["nt", ["P", ["class"], [1]]],
    ["nt", ["__import__('os')", ["x"], [1]]],
    ["nt", ["P", ["x"], [1, 2]]],
    ["date", [2020, 13, 1]],
    ["dt", [2020, 1, 1, 0, 0, 0, 0, 0, [5, 0, 0]]],
    ["range", [0, 1, 0]],
    ["nd", ["O", [1], [1]]],
    ["nd", ["<i8", [2], [1]]],
    ["nd", ["<U999999", [99999, 99999], []]],
    ["np", ["<i1", 1000]],
    ["pd", ["df", [["range", [0, 1, 1], None], ["index", "category", [], None], [], []]]],
    ["pd", ["series", [None, ["range", [0, 2, 1], None], "object", [1]]]],
    ["it", 5],
    ["nope", []],
    "F",
]


@pytest.mark.parametrize("body", FORGED, ids=[json.dumps(b)[:40] for b in FORGED])
def test_forged_rich_data_is_a_wire_error(body: Any) -> None:
    with pytest.raises(wire.WireError):
        wire.decode({"$r": body}, rich=True)


def test_rich_values_stay_out_of_values_and_call_mode() -> None:
    """Those modes compare as JSON on the trusted client: their wire is unchanged."""
    from fractions import Fraction

    with pytest.raises(wire.Unsupported):
        wire.encode(Fraction(1, 2))
    with pytest.raises(wire.WireError):
        wire.decode({"$r": ["F", [1, 2]]})
