"""Finds verifiers by name: the built-ins, then every `rlvr.verifiers` entry point.

Nothing is imported until a verifier is first asked for, so a broken or slow plugin
costs nothing until used, and a plugin that fails to import is reported (see
`Registry.broken`) rather than taking the service down.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel, TypeAdapter

from rlvr.verifiers.base import Verifier
from rlvr.verifiers.config import BuiltinConfig
from rlvr.verifiers.errors import PluginError, UnknownVerifier

ENTRY_POINT_GROUP = "rlvr.verifiers"

BUILTINS: dict[str, str] = {
    "format": "rlvr.verifiers.format:FormatVerifier",
    "math": "rlvr.verifiers.math:MathVerifier",
    "code": "rlvr.verifiers.code:CodeVerifier",
}
# What each built-in's constructor takes from the `BuiltinConfig`.
BUILTIN_ARGS: dict[str, Callable[[BuiltinConfig], tuple[Any, ...]]] = {
    "code": lambda config: (config.sandbox,),
}

log = logging.getLogger(__name__)


@dataclass
class LoadedVerifier:
    """A verifier instance with the validators of its params and ground truth."""

    instance: Verifier
    source: str
    params_adapter: TypeAdapter[Any]
    ground_truth_adapter: TypeAdapter[Any]
    default_deadline_s: float | None
    has_prepare: bool
    schemas: dict[str, Any] = field(default_factory=dict)

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


def _check(cls_or_obj: Any, expected_name: str, args: tuple[Any, ...] = ()) -> Verifier:
    instance = cls_or_obj(*args) if isinstance(cls_or_obj, type) else cls_or_obj
    for attr in ("name", "version", "params_model", "ground_truth_model", "verify"):
        if not hasattr(instance, attr):
            raise PluginError(f"verifier {expected_name!r} lacks required attribute {attr!r}")
    if instance.name != expected_name:
        raise PluginError(f"verifier registered as {expected_name!r} calls itself {instance.name!r}")
    params_model = instance.params_model
    if not (isinstance(params_model, type) and issubclass(params_model, BaseModel)):
        raise PluginError(f"verifier {expected_name!r}: params_model must be a pydantic model class")
    return instance  # type: ignore[no-any-return]


class Registry:
    def __init__(self, config: BuiltinConfig | None = None, *, use_entry_points: bool = True) -> None:
        self.config = config or BuiltinConfig()
        self._targets: dict[str, tuple[str, str]] = {n: (t, "builtin") for n, t in BUILTINS.items()}
        self._loaded: dict[str, LoadedVerifier] = {}
        self._broken: dict[str, str] = {}
        self._lock = threading.Lock()
        if use_entry_points:
            self._discover()

    def _discover(self) -> None:
        try:
            found = entry_points(group=ENTRY_POINT_GROUP)
        except Exception as exc:  # a corrupt dist-info must not stop the service
            log.error("could not list %s entry points: %s", ENTRY_POINT_GROUP, exc)
            return
        for ep in found:
            if ep.name in self._targets:
                origin = self._targets[ep.name][1]
                log.warning("entry point %s=%s ignored: name taken by %s", ep.name, ep.value, origin)
                continue
            dist = getattr(ep, "dist", None)
            self._targets[ep.name] = (ep.value, f"entry_point:{dist.name if dist else '?'}")

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
        args = BUILTIN_ARGS[name](self.config) if source == "builtin" and name in BUILTIN_ARGS else ()
        instance = _check(_load_target(target), name, args)
        params_adapter: TypeAdapter[Any] = TypeAdapter(instance.params_model)
        gt_adapter: TypeAdapter[Any] = TypeAdapter(instance.ground_truth_model)
        deadline = getattr(instance, "default_deadline_s", None)
        return LoadedVerifier(
            instance=instance,
            source=source,
            params_adapter=params_adapter,
            ground_truth_adapter=gt_adapter,
            default_deadline_s=float(deadline) if deadline is not None else None,
            has_prepare=callable(getattr(instance, "prepare", None)),
            schemas={
                "params": params_adapter.json_schema(),
                "ground_truth": gt_adapter.json_schema(),
            },
        )

    def describe(self) -> list[dict[str, Any]]:
        """Everything `GET /v1/verifiers` shows; loads every verifier."""
        out: list[dict[str, Any]] = []
        for name in self.names():
            try:
                v = self.get(name)
            except PluginError as exc:
                out.append({"name": name, "available": False, "error": exc.message, "source": self.source(name)})
                continue
            availability: dict[str, Any] = {}
            hook = getattr(v.instance, "availability", None)
            if callable(hook):
                try:
                    availability = dict(hook())
                except Exception as exc:
                    availability = {"error": f"{type(exc).__name__}: {exc}"}
            out.append(
                {
                    "name": name,
                    "version": v.version,
                    "description": getattr(v.instance, "description", ""),
                    "params_schema": v.schemas["params"],
                    "ground_truth_schema": v.schemas["ground_truth"],
                    "default_deadline_s": v.default_deadline_s,
                    "available": bool(availability.get("available", True)),
                    "availability": availability,
                    "source": v.source,
                }
            )
        return out


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry (one per API process and per worker process)."""
    global _default
    if _default is None:
        _default = Registry()
    return _default
