"""The `rlvr` command: the one place that builds the command tree and hands each command
to the package that does the work.

    rlvr serve      the HTTP service              rlvr.service.serve
    rlvr worker     a Redis stream consumer       rlvr.service.worker
    rlvr openapi    the OpenAPI document          rlvr.service.app
    rlvr grade      a JSONL file, through the client   rlvr.grade_file
    rlvr mcp        the MCP `python` tool on stdio   rlvr.service.mcp
    rlvr train      the bundled GRPO trainer      rlvr.trainer.grpo.launch

It sits above every package it dispatches to, so that none of them imports another's
command line. Every `serve` and `worker` flag is a field of `Settings`. `train`'s flags
come from the trainer's config, which needs torch: they are built only when `train` is
the command, so that the other commands never import it.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo

from rlvr.grade_file import DEFAULT_BATCH, run_grade
from rlvr.service.settings import Settings


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["train"]:
        return _train(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


def build_parser() -> argparse.ArgumentParser:
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
    _add_grade(sub)
    mcp = sub.add_parser(
        "mcp",
        help="Serve the MCP `python` tool on stdin/stdout.",
        description="Serve the MCP `python` tool (stateful sandboxed Python) on stdin/stdout, with its sessions in "
        "this process: for an agent that starts it. `rlvr serve` serves the same tool at /mcp over HTTP.",
    )
    add_settings_flags(mcp)
    mcp.set_defaults(func=_mcp)
    # Listed for --help only: `main` hands `train`'s arguments to `train_parser`.
    sub.add_parser("train", help="Train a policy with GRPO against rlvr (`rlvr train --help`; extra `train`).")
    return parser


GRADE_DESCRIPTION = "Grade a JSONL file of items, offline."


def _add_grade(sub: Any) -> None:
    p = sub.add_parser("grade", help="Grade a JSONL file of items.", description=GRADE_DESCRIPTION)
    p.add_argument("input", type=Path, help="JSONL file, one item per line.")
    p.add_argument("-o", "--output", type=Path, default=None, help="JSONL file of results (resumed if present).")
    p.add_argument(
        "--check",
        action="store_true",
        help="Grade nothing: list the lines whose params or ground truth their verifier refuses (exit 1 if any).",
    )
    p.add_argument("--strict", action="store_true", help="Stop at a line with invalid params or ground truth.")
    p.add_argument("--url", default=None, help="rlvr server to grade on (default: grade in this process).")
    p.add_argument("--verifier", default=None, help="Verifier for lines that name none.")
    p.add_argument("--response-field", default="response", help="Field holding the response [response].")
    p.add_argument("--truth-field", default="ground_truth", help="Field holding the ground truth [ground_truth].")
    p.add_argument("--prompt-field", default="prompt", help="Field holding the prompt [prompt].")
    p.add_argument("--id-field", default="id", help="Field echoed back as the result's id [id].")
    p.add_argument("--params", type=json.loads, default=None, help="Verifier params (JSON) for lines with none.")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH, help=f"Lines per batch [{DEFAULT_BATCH}].")
    p.add_argument("--no-progress", action="store_true", help="No progress bar.")
    p.set_defaults(func=run_grade)


def train_parser() -> argparse.ArgumentParser:
    from rlvr.trainer.grpo.config import TrainConfig

    parser = argparse.ArgumentParser(
        prog="rlvr train",
        description="Train a policy with GRPO, asking rlvr for rewards on every step. "
        "Settings come from --config (YAML or TOML); every key is also a flag, which wins.",
    )
    parser.add_argument("--config", type=Path, default=None, help="YAML or TOML file of settings.")
    for name, field in TrainConfig.model_fields.items():
        _add_field_flag(parser, name, field, f"{field.description or name} [default: {field.default}]")
    return parser


def add_settings_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("settings (also read from RLVR_<NAME> environment variables)")
    for name, field in Settings.model_fields.items():
        default = "one per core" if field.default_factory is not None else field.default
        _add_field_flag(group, name, field, f"{field.description} [env RLVR_{name.upper()}; default: {default}]")


def _add_field_flag(parser: Any, name: str, field: FieldInfo, helptext: str) -> None:
    """`--NAME` for a field of a settings model; unset flags are None, so that only what
    was given overrides the model's other sources."""
    flag = "--" + name.replace("_", "-")
    kind, choices, is_bool = _flag_type(field.annotation)
    if is_bool:
        parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=helptext)
    else:
        parser.add_argument(flag, dest=name, type=kind, choices=choices, default=None, help=helptext)


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


def _mcp(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    from rlvr.service.mcp import serve_stdio

    serve_stdio(settings)
    return 0


def _openapi(args: argparse.Namespace) -> int:
    from rlvr.service.app import openapi_document

    text = openapi_document()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text)
    return 0


def _train(argv: list[str]) -> int:
    from rlvr.trainer.grpo.config import config_from
    from rlvr.trainer.grpo.launch import train_command

    summary = train_command(config_from(train_parser().parse_args(argv)))
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
