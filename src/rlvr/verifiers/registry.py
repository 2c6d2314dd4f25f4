"""Finds verifiers by name, through the `rlvr.verifiers` entry-point group: rlvr's own
(the built-ins, always), then every other distribution's.

Nothing is imported until a verifier is first asked for, so a broken or slow plugin
costs nothing until used, and a plugin that fails to import is reported (see
`Registry.broken`) rather than taking the service down.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel, TypeAdapter

from rlvr.verifiers.base import (
    Availability,
    BatchEntry,
    BatchVerifying,
    DeadlineVerifying,
    HasDefaultDeadline,
    HasDescription,
    HasSignals,
    Outcome,
    Preparing,
    RunsPrograms,
    Signal,
    Verifier,
)
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.errors import PluginError, UnknownVerifier
from rlvr.verifiers.programs import ProgramRunner

ENTRY_POINT_GROUP = "rlvr.verifiers"

# The built-ins register in the group as a third party would, from rlvr's own
# distribution (pyproject.toml); they count as built-ins, and win a name both claim.
OWN_DISTRIBUTION = "rlvr"
# The members of `Verifier`, in the order a missing one is reported.
_REQUIRED_MEMBERS = ("name", "version", "params_model", "ground_truth_model", "verify")

# A signal's name, as metrics labels and adapters' log keys carry it.
SIGNAL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoadedVerifier:
    """A verifier instance, the validators of its params and ground truth, and its
    optional capabilities (the protocols of `rlvr.verifiers.base`), recognised once at
    load time so that no caller has to probe the instance."""

    instance: Verifier
    source: str
    params_adapter: TypeAdapter[Any]
    ground_truth_adapter: TypeAdapter[Any]
    schemas: dict[str, Any]
    description: str
    default_deadline_s: float | None
    prepare: Callable[[Any, Any], Any] | None
    availability: Callable[[], dict[str, Any]] | None
    # With its largest batch: None when the verifier verifies one item at a time.
    verify_many: Callable[[Sequence[BatchEntry]], list[Outcome | None]] | None = None
    max_batch: int = 1
    # `verify` told the item's deadline: None when the verifier has no use for it.
    verify_within: Callable[[BatchEntry], Outcome] | None = None
    # Its signal vocabulary (`HasSignals`): empty when it declares none.
    signals: Mapping[str, Signal] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.instance.name

    @property
    def version(self) -> str:
        return self.instance.version


def _load_target(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split(".") if attr else []:
        obj = getattr(obj, part)
    return obj


def _instantiate(cls_or_obj: Any, expected_name: str, runner: ProgramRunner) -> Verifier:
    if isinstance(cls_or_obj, type) and isinstance(cls_or_obj, RunsPrograms):
        instance: Any = cls_or_obj.from_runner(runner)
    elif isinstance(cls_or_obj, type):
        instance = cls_or_obj()
    else:
        instance = cls_or_obj
    if not isinstance(instance, Verifier):
        missing = next((attr for attr in _REQUIRED_MEMBERS if not hasattr(instance, attr)), "verify")
        raise PluginError(f"verifier {expected_name!r} lacks required attribute {missing!r}")
    if instance.name != expected_name:
        raise PluginError(f"verifier registered as {expected_name!r} calls itself {instance.name!r}")
    params_model = instance.params_model
    if not (isinstance(params_model, type) and issubclass(params_model, BaseModel)):
        raise PluginError(f"verifier {expected_name!r}: params_model must be a pydantic model class")
    return instance


def _default_deadline(instance: Verifier) -> float | None:
    if not isinstance(instance, HasDefaultDeadline) or instance.default_deadline_s is None:
        return None
    return float(instance.default_deadline_s)


def _loaded_verifier(instance: Verifier, source: str) -> LoadedVerifier:
    params_adapter: TypeAdapter[Any] = TypeAdapter(instance.params_model)
    ground_truth_adapter: TypeAdapter[Any] = TypeAdapter(instance.ground_truth_model)
    return LoadedVerifier(
        instance=instance,
        source=source,
        params_adapter=params_adapter,
        ground_truth_adapter=ground_truth_adapter,
        schemas={"params": params_adapter.json_schema(), "ground_truth": ground_truth_adapter.json_schema()},
        description=instance.description if isinstance(instance, HasDescription) else "",
        default_deadline_s=_default_deadline(instance),
        prepare=instance.prepare if isinstance(instance, Preparing) else None,
        availability=instance.availability if isinstance(instance, Availability) else None,
        verify_within=instance.verify_within if isinstance(instance, DeadlineVerifying) else None,
        signals=_signals(instance),
        **_batching(instance),
    )


def _signals(instance: Verifier) -> Mapping[str, Signal]:
    if not isinstance(instance, HasSignals):
        return {}
    vocabulary = instance.signals
    if not isinstance(vocabulary, Mapping):
        raise PluginError(f"verifier {instance.name!r}: signals must be a mapping of names to Signal")
    for name, signal in vocabulary.items():
        if not (isinstance(name, str) and SIGNAL_NAME.fullmatch(name) and isinstance(signal, Signal)):
            raise PluginError(f"verifier {instance.name!r}: signal {name!r} must be a snake_case name of a Signal")
    return dict(vocabulary)


def _batching(instance: Verifier) -> dict[str, Any]:
    if not isinstance(instance, BatchVerifying):
        return {}
    max_batch = instance.max_batch
    if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
        raise PluginError(f"verifier {instance.name!r}: max_batch must be a positive int, not {max_batch!r}")
    return {"verify_many": instance.verify_many, "max_batch": max_batch}


def _host_availability(loaded: LoadedVerifier) -> dict[str, Any]:
    """The verifier's own report; a failing report is shown, never raised."""
    if loaded.availability is None:
        return {}
    try:
        return dict(loaded.availability())
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


class Registry:
    """Verifiers by name, each loaded on first use with its capabilities resolved::

    >>> from rlvr.verifiers.registry import Registry
    >>> fmt = Registry(use_entry_points=False).get("format")
    >>> fmt.name, fmt.version, fmt.default_deadline_s, fmt.prepare is None
    ('format', '1.1.0', 5.0, True)
    """

    def __init__(
        self,
        config: BuiltinConfig | None = None,
        *,
        use_entry_points: bool = True,
        local: Mapping[str, str] | None = None,
    ) -> None:
        """`local`: verifiers of the embedding application's own, by name and
        `module:attribute` target, as an entry point names them; a name an entry point
        also claims is the entry point's."""
        self.config = config or BuiltinConfig()
        # Shared by every verifier that runs programs: one sandbox config, one check.
        self.runner = ProgramRunner(self.config.sandbox)
        self._targets: dict[str, tuple[str, str]] = {}
        self._loaded: dict[str, LoadedVerifier] = {}
        self._broken: dict[str, str] = {}
        self._lock = threading.Lock()
        self._discover(third_party=use_entry_points)
        for name, target in (local or {}).items():
            self._targets.setdefault(name, (target, "local"))

    def _discover(self, third_party: bool) -> None:
        """rlvr's own entry points always (they are built-ins), others' when asked."""
        try:
            found = entry_points(group=ENTRY_POINT_GROUP)
        except Exception as exc:  # a corrupt dist-info must not stop the service
            log.error("could not list %s entry points: %s", ENTRY_POINT_GROUP, exc)
            return
        for ep in sorted(found, key=lambda e: e.dist is None or e.dist.name != OWN_DISTRIBUTION):
            dist = ep.dist.name if ep.dist is not None else "?"
            own = dist == OWN_DISTRIBUTION
            if not (own or third_party):
                continue
            if ep.name in self._targets:
                origin = self._targets[ep.name][1]
                log.warning("entry point %s=%s ignored: name taken by %s", ep.name, ep.value, origin)
                continue
            self._targets[ep.name] = (ep.value, "builtin" if own else f"entry_point:{dist}")

    def names(self) -> list[str]:
        return sorted(self._targets)

    def source(self, name: str) -> str:
        return self._targets[name][1]

    def broken(self) -> dict[str, str]:
        return dict(self._broken)

    def get(self, name: str) -> LoadedVerifier:
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        if name not in self._targets:
            raise UnknownVerifier(f"unknown verifier {name!r}; known: {', '.join(self.names())}")
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            if name in self._broken:
                raise PluginError(f"verifier {name!r} failed to load: {self._broken[name]}")
            target, source = self._targets[name]
            try:
                loaded = self._build(name, target, source)
            except Exception as exc:
                self._broken[name] = f"{type(exc).__name__}: {exc}"
                log.error("verifier %r (%s) failed to load: %s", name, target, self._broken[name])
                raise PluginError(f"verifier {name!r} failed to load: {self._broken[name]}") from exc
            self._loaded[name] = loaded
            return loaded

    def _build(self, name: str, target: str, source: str) -> LoadedVerifier:
        return _loaded_verifier(_instantiate(_load_target(target), name, self.runner), source)

    def describe(self) -> list[dict[str, Any]]:
        """Everything `GET /v1/verifiers` shows; loads every verifier."""
        return [self._describe(name) for name in self.names()]

    def _describe(self, name: str) -> dict[str, Any]:
        try:
            loaded = self.get(name)
        except PluginError as exc:
            return {"name": name, "available": False, "error": exc.message, "source": self.source(name)}
        availability = _host_availability(loaded)
        return {
            "name": name,
            "version": loaded.version,
            "description": loaded.description,
            "params_schema": loaded.schemas["params"],
            "ground_truth_schema": loaded.schemas["ground_truth"],
            "default_deadline_s": loaded.default_deadline_s,
            "available": bool(availability.get("available", True)),
            "availability": availability,
            "signals": [
                {"name": signal, "description": info.description, "example": info.example}
                for signal, info in loaded.signals.items()
            ],
            "source": loaded.source,
        }
