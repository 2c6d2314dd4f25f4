from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from rlvr.service.errors import PluginError, UnknownVerifier
from rlvr.verifiers import registry as registry_module
from rlvr.verifiers.base import NoParams, Outcome, Verdict
from rlvr.verifiers.registry import Registry


class Good:
    name = "good"
    version = "2"
    description = "d"
    params_model = NoParams
    ground_truth_model = int
    default_deadline_s = 3

    def verify(self, item: object, params: object, ground_truth: object) -> Outcome:
        return Outcome(1.0, Verdict.CORRECT)


class Misnamed(Good):
    name = "other"


class NoVerify:
    name = "noverify"
    version = "1"
    params_model = NoParams
    ground_truth_model = None


@pytest.fixture
def fake_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    mod = types.ModuleType("rlvr_fake_plugins")
    mod.Good = Good  # type: ignore[attr-defined]
    mod.Misnamed = Misnamed  # type: ignore[attr-defined]
    mod.NoVerify = NoVerify  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rlvr_fake_plugins", mod)
    yield "rlvr_fake_plugins"


def make(monkeypatch: pytest.MonkeyPatch, targets: dict[str, str]) -> Registry:
    monkeypatch.setattr(registry_module, "BUILTINS", {**registry_module.BUILTINS, **targets})
    return Registry(use_entry_points=False)


def test_builtins_are_known_without_importing() -> None:
    reg = Registry(use_entry_points=False)
    assert {"format", "math", "code"} <= set(reg.names())
    assert reg.get("format").version


def test_loads_lazily_and_builds_adapters(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"good": f"{fake_module}:Good"})
    assert "good" not in reg._loaded
    loaded = reg.get("good")
    assert loaded.default_deadline_s == 3.0
    assert loaded.ground_truth_adapter.validate_python("5") == 5
    assert loaded.schemas["ground_truth"] == {"type": "integer"}
    assert reg.get("good") is loaded


def test_unknown_name(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UnknownVerifier, match="unknown verifier 'zzz'; known:"):
        Registry(use_entry_points=False).get("zzz")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("rlvr_no_such_module:X", "ModuleNotFoundError"),
        ("rlvr_fake_plugins:Missing", "AttributeError"),
        ("rlvr_fake_plugins:Misnamed", "calls itself 'other'"),
        ("rlvr_fake_plugins:NoVerify", "lacks required attribute 'verify'"),
    ],
)
def test_broken_plugins_reported(
    monkeypatch: pytest.MonkeyPatch, fake_module: str, target: str, message: str
) -> None:
    name = target.split(":")[1].lower()
    if name == "misnamed":
        name = "misnamed"
    reg = make(monkeypatch, {name: target})
    with pytest.raises(PluginError, match=message):
        reg.get(name)
    assert message in reg.broken()[name]
    described = {d["name"]: d for d in reg.describe()}
    assert described[name]["available"] is False
    assert described["format"]["available"] is True


def test_entry_points_discovered(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    from importlib.metadata import EntryPoint

    eps = [
        EntryPoint("good", f"{fake_module}:Good", "rlvr.verifiers"),
        EntryPoint("format", f"{fake_module}:Good", "rlvr.verifiers"),  # cannot shadow a built-in
    ]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: eps)
    reg = Registry()
    assert reg.get("good").version == "2"
    assert reg.source("format") == "builtin"
    assert reg.get("format").name == "format"
