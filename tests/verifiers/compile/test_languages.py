"""Each language: a program that compiles, one that does not, one with warnings; the
flags, warnings_as_errors and the warnings_penalty reward."""

from __future__ import annotations

import pytest

from tests.verifiers.compile.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated", "toolchain")

# language: (compiles cleanly, does not compile, compiles with one warning, flags that make it warn)
PROGRAMS: dict[str, tuple[str, str, str, list[str]]] = {
    "c": (
        '#include <stdio.h>\nint main(void) { printf("%d\\n", 6 * 7); return 0; }\n',
        "int main(void) { return missing; }\n",
        "int main(void) { int unused; return 0; }\n",
        ["-Wall"],
    ),
    "cpp": (
        "#include <vector>\nint main() { std::vector<int> v{1, 2}; return v.size() == 2 ? 0 : 1; }\n",
        "#include <vector>\nint main() { std::vector<int> v = 3; }\n",
        "int main() { int unused = 0; return 0; }\n",
        ["-Wall", "-Wextra"],
    ),
    "python": (
        "def f(x):\n    return [i * i for i in range(x)]\n\nprint(f(3))\n",
        "def f(x)\n    return x\n",
        "import re\nDIGIT = re.compile('\\d')\n",
        [],
    ),
    "javascript": (
        "const f = (x) => x.map((y) => y * 2);\nconsole.log(f([1, 2]));\n",
        "function f( {\n  return 1;\n}\n",
        "",
        [],
    ),
    "rust": (
        'fn main() {\n    let v = vec![1, 2, 3];\n    println!("{}", v.iter().sum::<i32>());\n}\n',
        'fn main() {\n    let x: i32 = "a";\n}\n',
        "fn main() {\n    let unused = 5;\n}\n",
        [],
    ),
}


@pytest.mark.parametrize("language", list(PROGRAMS))
def test_clean_program_compiles(language: str) -> None:
    clean, _, _, flags = PROGRAMS[language]
    out = grade(f"Here it is:\n```{language}\n{clean}```\n", language=language, flags=flags)
    assert (out.score, out.verdict, out.mask) == (1.0, "correct", False), out.reason
    assert out.details["warnings"] == 0


@pytest.mark.parametrize("language", list(PROGRAMS))
def test_broken_program_is_incorrect_with_the_first_error(language: str) -> None:
    _, broken, _, _ = PROGRAMS[language]
    out = grade(broken, language=language)
    assert (out.score, out.verdict, out.mask) == (0.0, "incorrect", False)
    assert "rror" in out.reason


@pytest.mark.parametrize("language", [lang for lang, p in PROGRAMS.items() if p[2]])
def test_warnings(language: str) -> None:
    _, _, warns, flags = PROGRAMS[language]
    binary = grade(warns, language=language, flags=flags)
    assert (binary.score, binary.verdict, binary.details["warnings"]) == (1.0, "correct", 1)
    penalised = grade(warns, language=language, flags=flags, reward="warnings_penalty", warning_penalty=0.25)
    assert (penalised.score, penalised.verdict) == (0.75, "partial")
    strict = grade(warns, language=language, flags=flags, warnings_as_errors=True)
    assert (strict.score, strict.verdict) == (0.0, "incorrect") and "warning" in strict.reason


def test_flags_reach_the_compiler() -> None:
    program = "int main(void) { int unused; return 0; }\n"
    assert grade(program, language="c").details["warnings"] == 0
    assert grade(program, language="c", flags=["-Wall"]).details["warnings"] == 1
    cpp17 = "#include <optional>\nint main() { std::optional<int> o; return o ? 1 : 0; }\n"
    assert grade(cpp17, language="cpp", flags=["-std=c++17"]).score == 1.0
    assert grade(cpp17, language="cpp", flags=["-std=c++11"]).score == 0.0


def test_penalty_floors_at_zero() -> None:
    program = "int main(void) { int a; int b; int c; return 0; }\n"
    out = grade(program, language="c", flags=["-Wall"], reward="warnings_penalty", warning_penalty=0.5)
    assert (out.score, out.verdict, out.details["warnings"]) == (0.0, "incorrect", 3)


def test_program_is_never_run() -> None:
    # Compiling succeeds; running would print or fail, which must not matter.
    assert grade("import sys\nsys.exit(3)\n", language="python").score == 1.0
    assert grade("int main() { return *(volatile int*)0; }\n", language="cpp").score == 1.0


def test_fence_of_another_language_is_not_the_program() -> None:
    response = "```python\nprint(1)\n```\n```cpp\nint main() { return 0; }\n```"
    assert grade(response, language="python").score == 1.0
    assert grade(response, language="cpp").score == 1.0
    assert grade("```\nnot a program at all(\n```", language="python").score == 0.0


def test_empty_program_is_no_answer() -> None:
    assert grade("```cpp\n```", language="cpp").verdict == "no_answer"
