"""`rlvr`: the command line. Every `serve` flag is a field of `service.settings.Settings`."""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlvr.service.settings import Settings

# Adds a subcommand to the parser's subparsers (the other packages' commands: `grade`).
AddCommand = Callable[[Any], None]


def _flag_type(annotation: Any) -> tuple[Any, list[str] | None, bool]:
    """argparse type, choices, and whether it is a boolean flag."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else str
        origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return str, [str(a) for a in typing.get_args(annotation)], False
    if annotation is bool:
        return None, None, True
    if annotation in (int, float):
        return annotation, None, False
    return str, None, False


def add_settings_flags(parser: argparse.ArgumentParser, only: set[str] | None = None) -> None:
    group = parser.add_argument_group("settings (also read from RLVR_<NAME> environment variables)")
    for name, field in Settings.model_fields.items():
        if only is not None and name not in only:
            continue
        flag = "--" + name.replace("_", "-")
        kind, choices, is_bool = _flag_type(field.annotation)
        default = "one per core" if field.default_factory is not None else field.default
        helptext = f"{field.description} [env RLVR_{name.upper()}; default: {default}]"
        if is_bool:
            group.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=helptext)
        else:
            group.add_argument(flag, dest=name, type=kind, choices=choices, default=None, help=helptext)


def settings_from(args: argparse.Namespace) -> Settings:
    """The settings: flags given on the command line over `RLVR_*` variables over defaults.
    Read once here; every component, worker processes included, gets what it needs from
    this object, never from the environment."""
    given = {name: value for name in Settings.model_fields if (value := getattr(args, name, None)) is not None}
    try:
        return Settings(**given)
    except Exception as exc:  # pydantic's message names the field
        raise SystemExit(f"rlvr: invalid settings: {exc}") from exc


def _serve(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    from rlvr.service.serve import serve

    serve(settings)
    return 0


def _worker(args: argparse.Namespace) -> int:
    if args.processes is not None and args.processes < 1:
        raise SystemExit("rlvr worker: --processes must be at least 1")
    settings = settings_from(args)
    if not settings.redis_url:
        raise SystemExit("rlvr worker: --redis-url (or RLVR_REDIS_URL) is required")
    from rlvr.service.worker import run_worker

    run_worker(settings, args.processes or settings.workers)
    return 0


def openapi_document() -> str:
    import yaml

    from rlvr.service.app import create_app

    return yaml.safe_dump(create_app().openapi(), sort_keys=False, allow_unicode=True)


def _openapi(args: argparse.Namespace) -> int:
    text = openapi_document()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


def build_parser(*commands: AddCommand) -> argparse.ArgumentParser:
    """The service's commands, plus `commands` from the packages above it (`rlvr.cli`)."""
    parser = argparse.ArgumentParser(prog="rlvr", description="Verifier and reward service for RLVR.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="Run the HTTP service.", description="Run the HTTP grading service.")
    add_settings_flags(serve)
    serve.set_defaults(func=_serve)
    worker = sub.add_parser(
        "worker", help="Verify jobs from the Redis stream.", description="Consume the Redis job stream."
    )
    worker.add_argument("--processes", type=int, default=None, help="Verifier processes (default: --workers).")
    add_settings_flags(worker)
    worker.set_defaults(func=_worker)
    spec = sub.add_parser("openapi", help="Print the OpenAPI document as YAML.")
    spec.add_argument("-o", "--output", default="-", help="File to write (default: stdout).")
    spec.set_defaults(func=_openapi)
    for add in commands:
        add(sub)
    return parser


def main(argv: list[str] | None = None, *commands: AddCommand) -> int:
    args = build_parser(*commands).parse_args(argv)
    return int(args.func(args))
