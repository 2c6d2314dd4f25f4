from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ClassVar

import pytest

from rlvr.sandboxes.config import SandboxConfig
from rlvr.service.work import Unit, UnitRunner
from rlvr.verifiers import registry as registry_module
from rlvr.verifiers.base import GradeInput, NoParams, Outcome, Signal, Verdict
from rlvr.verifiers.code import CodeVerifier
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.errors import PluginError, UnknownVerifier
from rlvr.verifiers.registry import ENTRY_POINT_GROUP, Registry


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


class Bare(NoVerify):
    """Only what `Verifier` requires: no description, deadline or hooks."""

    name = "bare"

    def verify(self, item: object, params: object, ground_truth: object) -> Outcome:
        return Outcome(0.0, Verdict.INCORRECT)


class Hooked(Good):
    """Every optional capability."""

    name = "hooked"

    def prepare(self, params: object, ground_truth: int) -> int:
        return ground_truth * 2

    def availability(self) -> dict[str, Any]:
        return {"available": False, "why": "no toolchain"}


class Batching(Good):
    name = "batching"
    max_batch = 8

    def verify_many(self, entries: list[Any]) -> list[Outcome | None]:
        return [None for _ in entries]


class BadBatch(Batching):
    name = "badbatch"
    max_batch = 0


class Signalling(Good):
    name = "signalling"
    signals: ClassVar[dict[Any, Any]] = {"tried_it": Signal("It tried it.", "an example")}

    def verify(self, item: GradeInput, params: Any, ground_truth: Any) -> Outcome:
        return Outcome(0.0, Verdict.INCORRECT, signals=("tried_it", "undeclared", "tried_it"))


class FailingAvailability(Good):
    name = "failingavailability"

    def availability(self) -> dict[str, Any]:
        raise OSError("probe died")


@pytest.fixture
def fake_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    mod = types.ModuleType("rlvr_fake_plugins")
    for cls in (Good, Misnamed, NoVerify, Bare, Hooked, Batching, BadBatch, Signalling, FailingAvailability):
        setattr(mod, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, "rlvr_fake_plugins", mod)
    yield "rlvr_fake_plugins"


def make(monkeypatch: pytest.MonkeyPatch, targets: dict[str, str]) -> Registry:
    return Registry(use_entry_points=False, local=targets)


def test_builtins_are_known_without_importing() -> None:
    reg = Registry(use_entry_points=False)
    assert {"format", "math", "code"} <= set(reg.names())
    assert reg.get("format").version


def test_code_is_built_with_the_configured_sandbox_policy() -> None:
    policy = SandboxConfig(backend="docker", min_isolation="full", allow_weak_isolation=True)
    configured = Registry(BuiltinConfig(sandbox=policy), use_entry_points=False).get("code").instance
    default = Registry(use_entry_points=False).get("code").instance
    assert isinstance(configured, CodeVerifier) and configured.runner.config == policy
    assert isinstance(default, CodeVerifier) and default.runner.config == SandboxConfig()


def test_every_builtin_registers_through_the_entry_point_group() -> None:
    own = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.dist is not None and ep.dist.name == "rlvr"}
    reg = Registry(use_entry_points=False)
    assert set(reg.names()) == own >= {"format", "math", "code", "proof", "compile", "ifeval"}
    assert all(reg.source(name) == "builtin" for name in reg.names())


def test_the_verifiers_that_run_programs_share_one_runner() -> None:
    reg = Registry(use_entry_points=False)
    runners = {id(reg.get(name).instance.runner) for name in ("code", "proof", "compile")}
    assert runners == {id(reg.runner)}


def test_loads_lazily_and_builds_adapters(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"good": f"{fake_module}:Good"})
    assert "good" not in reg._loaded
    loaded = reg.get("good")
    assert loaded.default_deadline_s == 3.0
    assert loaded.ground_truth_adapter.validate_python("5") == 5
    assert loaded.schemas["ground_truth"] == {"type": "integer"}
    assert reg.get("good") is loaded


def test_optional_capabilities_are_recognised_at_load(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"bare": f"{fake_module}:Bare", "hooked": f"{fake_module}:Hooked"})
    bare, hooked = reg.get("bare"), reg.get("hooked")
    assert (bare.description, bare.default_deadline_s, bare.prepare, bare.availability) == ("", None, None, None)
    assert bare.prepare is None
    assert hooked.prepare is not None and hooked.prepare(NoParams(), 4) == 8
    assert hooked.availability is not None and hooked.availability()["why"] == "no toolchain"
    described = {d["name"]: d for d in reg.describe()}
    assert described["bare"]["description"] == "" and described["bare"]["available"] is True
    assert described["hooked"]["available"] is False
    assert described["hooked"]["availability"] == {"available": False, "why": "no toolchain"}


def test_batching_is_recognised_at_load(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"batching": f"{fake_module}:Batching", "bare": f"{fake_module}:Bare"})
    batching, bare = reg.get("batching"), reg.get("bare")
    assert batching.max_batch == 8 and batching.verify_many is not None
    assert batching.verify_many([1, 2]) == [None, None]
    assert (bare.max_batch, bare.verify_many) == (1, None)
    assert Registry(use_entry_points=False).get("code").max_batch > 1


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8", None])
def test_a_bad_batch_size_is_refused(monkeypatch: pytest.MonkeyPatch, fake_module: str, bad: object) -> None:
    monkeypatch.setattr(BadBatch, "max_batch", bad)
    reg = make(monkeypatch, {"badbatch": f"{fake_module}:BadBatch"})
    with pytest.raises(PluginError, match="max_batch"):
        reg.get("badbatch")


def test_a_plugins_signals_are_its_declared_ones(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"signalling": f"{fake_module}:Signalling", "good": f"{fake_module}:Good"})
    unit = Unit("k", "p", "signalling", {}, 1, "q", "r", 5.0)
    assert UnitRunner(reg).run(unit).signals == ["tried_it"]  # once, and the undeclared one dropped
    described = {d["name"]: d for d in reg.describe()}
    assert described["signalling"]["signals"] == [
        {"name": "tried_it", "description": "It tried it.", "example": "an example"}
    ]
    assert described["good"]["signals"] == []


@pytest.mark.parametrize(
    "bad",
    [
        {"Tried It": Signal("d", "e")},
        {"tried": "a description"},
        {1: Signal("d", "e")},
        ["tried"],
        {"x" * 65: Signal("d", "e")},
    ],
)
def test_a_bad_signal_vocabulary_is_refused(monkeypatch: pytest.MonkeyPatch, fake_module: str, bad: object) -> None:
    monkeypatch.setattr(Signalling, "signals", bad)
    reg = make(monkeypatch, {"signalling": f"{fake_module}:Signalling"})
    with pytest.raises(PluginError, match="signal"):
        reg.get("signalling")


def test_failing_availability_is_shown_not_raised(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    reg = make(monkeypatch, {"failingavailability": f"{fake_module}:FailingAvailability"})
    described = {d["name"]: d for d in reg.describe()}["failingavailability"]
    assert described["availability"] == {"error": "OSError: probe died"}
    assert described["available"] is True


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
def test_broken_plugins_reported(monkeypatch: pytest.MonkeyPatch, fake_module: str, target: str, message: str) -> None:
    name = target.split(":")[1].lower()
    reg = make(monkeypatch, {name: target})
    with pytest.raises(PluginError, match=message):
        reg.get(name)
    # Reported once: later items get the recorded failure, not another import attempt.
    with monkeypatch.context() as patch, pytest.raises(PluginError, match=message):
        patch.setattr(registry_module, "_load_target", lambda target: pytest.fail("loaded again"))
        reg.get(name)
    described = {d["name"]: d for d in reg.describe()}
    assert described[name]["available"] is False
    assert message in described[name]["error"]
    assert described["format"]["available"] is True
    assert list(reg.broken()) == [name]


def test_entry_points_discovered(monkeypatch: pytest.MonkeyPatch, fake_module: str) -> None:
    eps = [
        EntryPoint("good", f"{fake_module}:Good", "rlvr.verifiers"),
        EntryPoint("format", f"{fake_module}:Good", "rlvr.verifiers"),  # cannot shadow a built-in
        *entry_points(group=ENTRY_POINT_GROUP),  # rlvr's own, listed after: they still win
    ]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: eps)
    reg = Registry()
    assert reg.get("good").version == "2"
    assert reg.source("good") == "entry_point:?"
    assert reg.source("format") == "builtin"
    assert reg.get("format").name == "format"


def test_later_builtins_register_through_the_entry_point_group_third_parties_use() -> None:
    own = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.dist is not None and ep.dist.name == "rlvr"}
    assert {"proof", "compile", "ifeval"} <= own
    reg = Registry(use_entry_points=False)  # third-party plugins off; rlvr's own stay
    assert {"proof", "compile", "ifeval"} <= set(reg.names())
    assert all(reg.source(name) == "builtin" for name in ("proof", "compile", "ifeval"))
    # Built with the sandbox config, as the first built-ins are.
    policy = SandboxConfig(min_isolation="none")
    proof = Registry(BuiltinConfig(sandbox=policy), use_entry_points=False).get("proof").instance
    assert proof.runner.config == policy
