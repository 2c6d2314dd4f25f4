"""Round 3, class 5: where warnings count, a program may not switch them off itself.
Each C/C++ spelling of diagnostic control (pragmas, splices, digraphs, trigraphs,
comments, macros, `_Pragma`, line markers, a file that includes itself as a system
header) counts as a warning; every Rust `allow` silences nothing. Where warnings do not
count, and for what does not switch anything off, nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from rlvr.verifiers.compile import driver
from tests.verifiers.compile.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated", "toolchain")

# One unused variable: one warning under -Wall, unless something switches it off.
C_BODY = "int main(void) { int unused; return 0; }\n"
IGNORE = '"-Wunused-variable"'
HIDDEN_C: dict[str, str] = {
    "pragma": f"#pragma GCC diagnostic ignored {IGNORE}\n",
    "spaces": f"  #  pragma   GCC\tdiagnostic    ignored   {IGNORE}\n",
    "comments_between_tokens": f"# /* a */ pragma /* b */ GCC /* c */ diagnostic ignored {IGNORE}\n",
    "comment_across_lines": f"#pragma GCC /* a\n b */ diagnostic ignored {IGNORE}\n",
    "spliced_directive": f"#pra\\\ngma GCC diag\\\nnostic ign\\\nored {IGNORE}\n",
    "spliced_hash": f"\\\n#\\\n pragma GCC diagnostic ignored {IGNORE}\n",
    "digraph": f"%:pragma GCC diagnostic ignored {IGNORE}\n",
    "digraph_spliced": f"%\\\n:pragma GCC diagnostic ignored {IGNORE}\n",
    "_Pragma": '_Pragma("GCC diagnostic ignored \\"-Wunused-variable\\"")\n',
    "_Pragma_spaced": '_Pragma ( "GCC diagnostic ignored \\"-Wunused-variable\\"" )\n',
    "macro_pragma": "#define P(x) _Pragma(#x)\n#define QUIET(w) P(GCC diagnostic ignored w)\n"
    'QUIET("-Wunused-variable")\n',
    "macro_string": '#define S "GCC diagnostic ignored \\"-Wunused-variable\\""\n_Pragma(S)\n',
    "pragma_all": '#pragma GCC diagnostic ignored "-Wall"\n',
    "push_ignore_pop": f"#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored {IGNORE}\n",
    "downgrade_to_warning": f"#pragma GCC diagnostic warning {IGNORE}\n",
    "ignored_attributes": '#pragma GCC diagnostic ignored_attributes "x"\n',
    "clang_pragma": f"#pragma clang diagnostic ignored {IGNORE}\n",
    "msvc_pragma": "#pragma warning(disable: 4101)\n",
    "line_marker": '# 1 "x.h" 3\n',
    "line_marker_real_header": '# 30 "/usr/include/stdio.h" 3\n',
    "line_marker_after_comment": '#/* a\n*/ 30 "/usr/include/stdio.h" 3 4\n',
    "line_marker_own_file": '# 1 "/tmp/compile/main.c" 3\n',
    "self_include_system_header": "#ifndef ONCE\n#define ONCE\n#include __FILE__\n#else\n#pragma GCC system_header\n",
}
# The self-include's #else branch holds the body; its #endif comes after it.
ENDINGS = {"self_include_system_header": "#endif\n"}
UNSEEN_BY_THE_SCAN = {"self_include_system_header"}
HIDDEN_CPP: dict[str, str] = {
    **{name: text for name, text in HIDDEN_C.items() if "/tmp/compile/main.c" not in text},
    "cpp_line_marker_own_file": '# 1 "/tmp/compile/main.cpp" 3\n',
    "cpp_self_include": '#ifndef ONCE\n#define ONCE\n#include "/proc/self/cwd/main.cpp"\n#else\n'
    "#pragma GCC system_header\n",
}
ENDINGS["cpp_self_include"] = ENDINGS["cpp_self_include_by_pid"] = "#endif\n"
MODES: dict[str, dict[str, Any]] = {
    "warnings_as_errors": {"warnings_as_errors": True},
    "warnings_penalty": {"reward": "warnings_penalty", "warning_penalty": 0.25},
    "werror_flag": {"flags": ["-Wall", "-Werror"]},
}


def _program(name: str, hidden: str) -> str:
    return hidden + C_BODY + ENDINGS.get(name, "")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("name", list(HIDDEN_C))
def test_c_diagnostic_control_counts_as_a_warning(name: str, mode: str) -> None:
    program = _program(name, HIDDEN_C[name])
    params = {"flags": ["-Wall"], **MODES[mode]}
    out = grade(program, language="c", **params)
    assert not out.mask, out.reason
    assert out.score <= (0.75 if mode == "warnings_penalty" else 0.0), (out.score, out.reason, out.details)
    # The self-include's warnings still count, but where it compiles nothing of it was
    # switched off for the scan to see: no signal then.
    assert out.signals == ("diagnostic_control",) or name in UNSEEN_BY_THE_SCAN, out.details


@pytest.mark.parametrize("mode", ["warnings_as_errors", "werror_flag"])
@pytest.mark.parametrize("name", list(HIDDEN_CPP))
def test_cpp_diagnostic_control_counts_as_a_warning(name: str, mode: str) -> None:
    program = HIDDEN_CPP[name] + "int main() { int unused; return 0; }\n" + ENDINGS.get(name, "")
    out = grade(program, language="cpp", **{"flags": ["-Wall", "-std=c++17"], **MODES[mode]})
    assert (out.score, out.mask) == (0.0, False), (out.reason, out.details)
    assert out.signals == ("diagnostic_control",) or name in UNSEEN_BY_THE_SCAN, out.details


@pytest.mark.parametrize("std", ["-std=c99", "-std=c11"])
def test_trigraph_pragma_where_trigraphs_are_on(std: str) -> None:
    program = f"??=pragma GCC diagnostic ignored {IGNORE}\n" + C_BODY
    out = grade(program, language="c", flags=["-Wall", std], warnings_as_errors=True)
    assert (out.score, out.mask, out.details.get("suppressions")) == (0.0, False, 1), out.reason
    assert out.signals == ("diagnostic_control",)


def test_a_suppression_is_one_warning_each_and_is_listed() -> None:
    program = f'#pragma GCC diagnostic ignored {IGNORE}\n_Pragma("GCC diagnostic ignored \\"-Wall\\"")\n' + C_BODY
    out = grade(program, language="c", flags=["-Wall"], reward="warnings_penalty", warning_penalty=0.25)
    assert (out.score, out.verdict, out.details["suppressions"], out.details["warnings"]) == (0.5, "partial", 2, 2)
    assert out.details["suppression_lines"] == [
        f"#pragma GCC diagnostic ignored {IGNORE}",
        '#pragma GCC diagnostic ignored "-Wall"',
    ]
    assert "in-source suppressions" in out.reason


# Programs that switch nothing off: graded as before, whatever the mode.
HARMLESS: dict[str, str] = {
    "push_pop": "#pragma GCC diagnostic push\n#pragma GCC diagnostic pop\n",
    "error": '#pragma GCC diagnostic error "-Wshadow"\n',
    "other_pragmas": '#pragma GCC optimize("O2")\n#pragma pack(push, 1)\n#pragma pack(pop)\n',
    "in_a_string": 'const char *s = "#pragma GCC diagnostic ignored \\"-Wall\\"";\n',
    "in_a_comment": '/*\n#pragma GCC diagnostic ignored "-Wall"\n*/\n// #pragma warning(disable: 1)\n',
    "in_a_false_branch": '#if 0\n#pragma GCC diagnostic ignored "-Wall"\n#endif\n',
    "system_headers": "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\n",
    "plain_line_directive": '#line 10 "renamed.c"\n',
}


@pytest.mark.parametrize("name", list(HARMLESS))
def test_what_switches_nothing_off_is_not_counted(name: str) -> None:
    program = HARMLESS[name] + "int main(void) { return 0; }\n"
    for mode in MODES.values():
        out = grade(program, language="c", **{"flags": ["-Wall"], **mode})
        assert (out.score, out.verdict, out.mask) == (1.0, "correct", False), (name, out.reason, out.details)
        assert "suppressions" not in out.details and out.signals == ()


def test_cpp_headers_are_not_counted() -> None:
    program = "#include <bits/stdc++.h>\nint main() { std::vector<int> v{1}; std::cout << v[0]; }\n"
    out = grade(
        program, language="cpp", flags=["-Wall", "-Wextra", "-std=c++17"], warnings_as_errors=True, timeout_s=30
    )
    assert (out.score, out.mask) == (1.0, False), (out.reason, out.details)


def test_where_warnings_do_not_count_nothing_changes() -> None:
    out = grade(f"#pragma GCC diagnostic ignored {IGNORE}\n" + C_BODY, language="c", flags=["-Wall"])
    assert (out.score, out.verdict, out.details["warnings"]) == (1.0, "correct", 0)
    assert "suppressions" not in out.details and out.signals == ()


def test_a_program_that_fails_to_compile_is_graded_by_its_error() -> None:
    out = grade(
        f"#pragma GCC diagnostic ignored {IGNORE}\nint main(void) {{ return missing; }}\n",
        language="c",
        warnings_as_errors=True,
    )
    assert (out.score, out.verdict) == (0.0, "incorrect") and "missing" in out.reason


# ---------------------------------------------------------------- rust

RUST_BODY = "fn main() {\n    let unused = 5;\n}\n"
HIDDEN_RUST: dict[str, str] = {
    "inner_allow": "#![allow(unused_variables)]\n" + RUST_BODY,
    "allow_warnings": "#![allow(warnings)]\n" + RUST_BODY,
    "allow_unused_group": "#![allow(unused)]\n" + RUST_BODY,
    "outer_allow": "#[allow(unused_variables)]\n" + RUST_BODY,
    "cfg_attr": "#![cfg_attr(all(), allow(unused_variables))]\n" + RUST_BODY,
    "cfg_attr_nested": "#![cfg_attr(not(any()), cfg_attr(all(), allow(warnings)))]\n" + RUST_BODY,
    "spaced": "# ! [ allow ( unused_variables ) ]\n" + RUST_BODY,
    "comment_between": "#![/* x */ allow(/* y */ unused_variables)]\n" + RUST_BODY,
    "on_a_block": "fn main() {\n    #[allow(unused_variables)]\n    let unused = 5;\n}\n",
    "from_a_macro": "macro_rules! quiet { ($i:item) => { #[allow(unused_variables)] $i }; }\nquiet! { "
    + RUST_BODY.strip()
    + " }\n",
    "deny_then_allow": "#![deny(warnings)]\n#![allow(unused_variables)]\n" + RUST_BODY,
    "dead_code": "#![allow(dead_code)]\nfn helper() {}\nfn main() {}\n",
    "non_snake_case": "#![allow(non_snake_case)]\nfn Main() {}\nfn main() { Main(); }\n",
}


@pytest.mark.parametrize("mode", ["warnings_as_errors", "warnings_penalty"])
@pytest.mark.parametrize("name", list(HIDDEN_RUST))
def test_rust_allow_attributes_silence_nothing(name: str, mode: str) -> None:
    out = grade(HIDDEN_RUST[name], language="rust", **MODES[mode])
    assert not out.mask, out.reason
    assert out.score <= (0.75 if mode == "warnings_penalty" else 0.0), (out.score, out.reason, out.details)
    assert out.details.get("warnings", 0) >= (1 if mode == "warnings_penalty" else 0)


def test_rust_clean_program_stays_clean_under_forced_lints() -> None:
    program = '#![allow(dead_code)]\nfn main() {\n    let v = vec![1, 2];\n    println!("{}", v.len());\n}\n'
    out = grade(program, language="rust", warnings_as_errors=True)
    assert (out.score, out.verdict, out.details["warnings"]) == (1.0, "correct", 0), out.details


# ---------------------------------------------------------------- the driver's scan, alone


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ('#pragma GCC diagnostic ignored "-Wall"\n', True),
        ('#pragma clang diagnostic ignored "-Wall"\n', True),
        ('#pragma GCC diagnostic warning "-Wall"\n', True),
        ("#pragma GCC diagnostic\n", True),
        ("#pragma warning(disable: 4996)\n", True),
        ("#pragma warning (push, 0)\n", True),
        ("#pragma GCC diagnostic push\n", False),
        ("#pragma GCC diagnostic pop\n", False),
        ('#pragma GCC diagnostic error "-Wall"\n', False),
        ('#pragma GCC warning "note to self"\n', False),
        ("#pragma once\n", False),
        ('int x; // #pragma GCC diagnostic ignored "-Wall"\n', False),
        ("#" + " " * 100_000 + "pragma GCC diagnostic ignored x\n", True),
    ],
)
def test_driver_reads_pragma_lines(line: str, found: bool) -> None:
    assert driver._controls_diagnostics(line) is found


LONG_MARKER = '# 1 "' + "\\" * 100_000 + '" 3'
PREPROCESSED = """\
# 0 "/tmp/x/main.c"
# 1 "/usr/include/stdio.h" 1 3 4
#pragma GCC diagnostic ignored "-Wheader-only"
# 2 "/tmp/x/main.c" 2
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmine"
# 7 "{own}" 3
#pragma GCC diagnostic ignored "-Wcounted-as-the-marker"
# 8 "{own}" 3
# 9 "/no/such/header.h" 3
{long_marker}
int main(void) {{ return 0; }}
"""


def test_driver_scan_counts_the_programs_own_text_only(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "main.c"
    own.write_text("")
    pre = tmp_path / "main.i"
    pre.write_text(PREPROCESSED.format(own=own, long_marker=LONG_MARKER))
    output = tmp_path / "output"
    output.write_text("main.c:3:3: warning: style of line directive is a GCC extension\nmain.c:4: note\n")
    monkeypatch.setattr(driver, "OUTPUT_FILE", str(output))
    found = driver._scan({"file": str(pre), "output_marks": ["style of line directive"]})
    assert found == [
        '#pragma GCC diagnostic ignored "-Wmine"',
        f'# 7 "{own}" 3',
        '# 9 "/no/such/header.h" 3',
        LONG_MARKER[:200],
        "main.c:3:3: warning: style of line directive is a GCC extension",
    ]


def test_driver_masks_a_rustc_without_a_lint_list() -> None:
    step = {
        "name": "compile",
        "argv": ["/bin/true"],
        "cwd": "/tmp",
        "timeout_s": 5,
        "fsize_bytes": 1 << 20,
        "keep_output": 1024,
        "force_warn": True,
    }
    result = driver.run_step(step, {"PATH": "/usr/bin:/bin"})
    assert result["status"] == "unavailable" and "listed no lints" in result["out"]
