"""Builds the sandbox image from a checkout (docker/sandbox.Dockerfile) through the
daemon. The build context is only the files the Dockerfile's COPY lines name, so it
needs no .dockerignore and does not send the checkout's virtualenv. A COPY source may
be a wildcard, as Docker's are (`build/job-wheel[s]`: that folder where it exists)."""

from __future__ import annotations

import io
import shlex
import tarfile
from pathlib import Path
from typing import Any

DOCKERFILE = Path("docker") / "sandbox.Dockerfile"
BUILD_TIMEOUT_S = 1800
# What this host built or cached beside the sources: never sent (an extension module
# built for the host's Python must not be imported in the image's).
NOT_SENT = {".pyc", ".so"}
WILDCARDS = set("*?[")


def context_files(root: Path) -> list[Path]:
    """The sources of every COPY line (relative to `root`), and the Dockerfile."""
    files = [DOCKERFILE]
    for line in (root / DOCKERFILE).read_text().splitlines():
        words = shlex.split(line) if line.startswith("COPY ") else []
        if words and not any(w.startswith("--") for w in words[1:]):
            for source in words[1:-1]:
                paths = sorted(root.glob(source)) if WILDCARDS & set(source) else [root / source]
                for path in paths:
                    found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
                    files += [p.relative_to(root) for p in found if _sent(p)]
    return list(dict.fromkeys(files))


def _sent(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix not in NOT_SENT


def context(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for rel in context_files(root):
            tar.add(str(root / rel), arcname=str(rel), recursive=False)
    return buffer.getvalue()


def build(api: Any, root: Path, tag: str, base: str | None = None) -> str:
    """Build the image as `tag` (with `base` in place of the public base image, where
    no registry is reachable); returns the daemon's build log."""
    log: list[str] = []
    stream = api.build(
        fileobj=io.BytesIO(context(root)),
        custom_context=True,
        dockerfile=str(DOCKERFILE),
        tag=tag,
        buildargs={"BASE": base} if base else None,
        rm=True,
        forcerm=True,
        decode=True,
        timeout=BUILD_TIMEOUT_S,
    )
    for chunk in stream:
        if "error" in chunk:
            raise RuntimeError(f"sandbox image build failed: {chunk['error']}\n{''.join(log)[-4000:]}")
        log.append(str(chunk.get("stream", "")))
    return "".join(log)
