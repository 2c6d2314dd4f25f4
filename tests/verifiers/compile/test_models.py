"""Params that could never grade, or that would hand the compiler a file to read or
write, are refused before any grading, naming the field and the flag."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from rlvr.verifiers.compile import CompileParams, CompileVerifier
from rlvr.verifiers.compile.models import ALLOWED_FLAGS

BAD: dict[str, tuple[dict[str, Any], str]] = {
    "unknown_language": ({"language": "cobol"}, "unknown language 'cobol'"),
    "missing_language": ({}, "language"),
    "output_flag": ({"language": "cpp", "flags": ["-o", "/tmp/x"]}, "flags[0]: '-o'"),
    "include_flag": ({"language": "c", "flags": ["-Wall", "-include/etc/passwd"]}, "flags[1]"),
    "plugin_flag": ({"language": "cpp", "flags": ["-fplugin=/tmp/evil.so"]}, "-fplugin"),
    "response_file": ({"language": "cpp", "flags": ["@/etc/passwd"]}, "@/etc/passwd"),
    "c_standard_for_cpp": ({"language": "cpp", "flags": ["-std=c11"]}, "-std=c11"),
    "cpp_standard_for_c": ({"language": "c", "flags": ["-std=c++17"]}, "-std=c++17"),
    "flags_for_python": ({"language": "python", "flags": ["-O"]}, "allowed: none"),
    "rust_codegen": ({"language": "rust", "flags": ["-C", "link-arg=x"]}, "flags[0]"),
    "too_many_flags": ({"language": "c", "flags": ["-Wall"] * 17}, "flags"),
    "bad_reward": ({"language": "c", "reward": "lenient"}, "reward"),
    "penalty_range": ({"language": "c", "warning_penalty": 2}, "warning_penalty"),
    "timeout_range": ({"language": "c", "timeout_s": 300}, "timeout_s"),
    "unknown_param": ({"language": "c", "werror": True}, "werror"),
}


@pytest.mark.parametrize(("params", "named"), list(BAD.values()), ids=list(BAD))
def test_bad_params_name_the_field(params: dict[str, Any], named: str) -> None:
    with pytest.raises(ValidationError) as info:
        CompileParams(**params)
    assert named in str(info.value)


@pytest.mark.parametrize(
    ("alias", "language"), [("c++", "cpp"), ("JS", "javascript"), ("py", "python"), ("rs", "rust")]
)
def test_language_aliases(alias: str, language: str) -> None:
    assert CompileParams(language=alias).language == language


def test_every_allowed_flag_is_accepted() -> None:
    for language, flags in ALLOWED_FLAGS.items():
        for flag in flags:
            assert CompileParams(language=language, flags=[flag]).flags == [flag]


def test_ground_truth_is_none() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(CompileVerifier.ground_truth_model)
    assert adapter.validate_python(None) is None
    with pytest.raises(ValidationError):
        adapter.validate_python({"tests": []})
