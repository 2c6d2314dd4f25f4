"""Programs aimed at the compiler: each ends `incorrect` or `timeout` under the
sandbox's caps, never masked and never hanging the grader. (Python's and node's
front ends take a few of them in stride: those compile, and say so.)"""

from __future__ import annotations

import pytest

from tests.verifiers.compile.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated", "toolchain")

HOSTILE: dict[str, tuple[str, str]] = {
    "include_dev_zero": ("cpp", "#include </dev/zero>\n"),
    "include_dev_urandom": ("c", "#include </dev/urandom>\nint main(void) { return 0; }\n"),
    "include_itself": ("c", '#include "/tmp/compile/main.c"\nint x;\n'),
    "template_bomb": (
        "cpp",
        "template<int N> struct F { enum { v = F<N - 1>::v + F<N - 2>::v }; };\n"
        "template<> struct F<0> { enum { v = 0 }; };\ntemplate<> struct F<1> { enum { v = 1 }; };\n"
        "int x = F<100000>::v;\n",
    ),
    "template_blowup": (
        "cpp",
        "template<class T> struct P { typedef P<P<T>> next; };\n"
        "template<class T, int N> struct D { typedef typename D<typename T::next, N - 1>::t t; };\n"
        "template<class T> struct D<T, 0> { typedef T t; };\nD<P<int>, 3000>::t x;\n",
    ),
    "huge_static_array": ("c", "static int a[1 << 28] = {1};\nint main(void) { return a[0]; }\n"),
    "huge_initialised_array": ("cpp", "char big[200000000] = {1, 2, 3};\nint main() { return big[0]; }\n"),
    "constexpr_loop": (
        "cpp",
        "constexpr long f() { long i = 0; while (true) { ++i; } return i; }\nconstexpr long x = f();\n",
    ),
    "error_flood": ("cpp", "#define A x x x x x x x x x x\n#define B A A A A A A A A A A\n" + "B B B B B\n" * 2000),
    "python_deep_nesting": ("python", "x = " + "(" * 100000 + ")" * 100000 + "\n"),
    "python_folding": ("python", "x = 2 ** 100000000 * 'ab' * 10 ** 9\n"),
    "python_huge_literal": ("python", "x = " + "1" * 100000 + " ** " + "9" * 50 + "\n"),
    "javascript_huge_regex": ("javascript", "const r = /" + "(a*)*" * 20000 + "/;\n"),
    "rust_macro_recursion": (
        "rust",
        "macro_rules! m { ($($t:tt)*) => { m!($($t)* $($t)*); }; }\nfn main() { m!(x); }\n",
    ),
}
# Valid programs whose compilation could be costly but is not.
COMPILES = {HOSTILE[name][1]: ("correct",) for name in ("python_folding", "javascript_huge_regex")}


@pytest.mark.parametrize(("language", "program"), list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_program_is_incorrect_or_timeout_never_masked(language: str, program: str) -> None:
    out = grade(program, language=language, timeout_s=5, memory_mb=1024)
    expected = COMPILES.get(program, ("incorrect", "timeout"))
    assert out.verdict in expected and not out.mask, out.reason
    assert out.score == (1.0 if out.verdict == "correct" else 0.0)
