"""The sandbox image for the tests, built once per session from this checkout
(docker/sandbox.Dockerfile) on the base image the Dockerfile names: in CI that is
the stand-in `.ci/stand-in-images` builds. RLVR_TEST_SANDBOX_BASE names another base;
RLVR_TEST_SANDBOX_IMAGE names an image already built to use instead (no build)."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

from rlvr.sandboxes.config import DEFAULT_DOCKER_URL, DockerConfig
from rlvr.sandboxes.docker import containers, image
from tests.sandboxes import job_wheels
from tests.services import ROOT, require

PREBUILT = os.environ.get("RLVR_TEST_SANDBOX_IMAGE")
TEST_IMAGE = PREBUILT or "rlvr-sandbox:test"
# Small, so the tests see the pool empty and refill too.
TEST_POOL_SIZE = 2


@functools.cache
def _build() -> str | None:
    """None once the image is built, else why it could not be."""
    try:
        api = containers.sdk().APIClient(base_url=DEFAULT_DOCKER_URL)
        api.ping()
    except Exception as exc:
        return f"a Docker daemon ({type(exc).__name__}: {exc})"
    if PREBUILT:
        return None
    try:
        job_wheels.download()
        image.build(api, ROOT, TEST_IMAGE, base=os.environ.get("RLVR_TEST_SANDBOX_BASE"))
    except Exception as exc:
        return f"the sandbox image (build failed: {exc})"
    return None


def sandbox_config(**changes: Any) -> DockerConfig:
    """A config of the test image; skips (fails in CI) where Docker or the image's base
    is missing."""
    missing = _build()
    require(missing is None, str(missing))
    return dataclasses.replace(DockerConfig(image=TEST_IMAGE, pool_size=TEST_POOL_SIZE), **changes)
