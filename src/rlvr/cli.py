"""The `rlvr` command: the service's commands (`serve`, `worker`, `openapi`), `grade`
(a JSONL file through the client) and `train` (the bundled GRPO trainer).

It sits above the packages it dispatches to, so that the service never imports the
client or the trainer: `train` is handed to the trainer's own parser before anything
else is parsed, so the other commands never import torch.
"""

from __future__ import annotations

import sys
from typing import Any

from rlvr.grade_cli import add_grade_parser
from rlvr.service import cli as service_cli


def _add_train(sub: Any) -> None:
    # Listed for --help only; `main` hands `train`'s arguments to the trainer.
    sub.add_parser("train", help="Train a policy with GRPO against rlvr (`rlvr train --help`; extra `train`).")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["train"]:
        from rlvr.trainer.grpo.cli import main as train_main

        return train_main(argv[1:])
    return service_cli.main(argv, add_grade_parser, _add_train)


if __name__ == "__main__":
    raise SystemExit(main())
