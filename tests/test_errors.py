"""The one exception tree: every class of it is in the drawing of `rlvr.errors`, and has
an HTTP status in the one map of `rlvr.service.errors`."""

from __future__ import annotations

import importlib
import re

import pytest

import rlvr.errors
from rlvr.errors import RLVRError
from rlvr.service.errors import HTTP_STATUS, http_status

# Where the tree's branches live; importing them makes every class a known subclass.
BRANCHES = ("rlvr.service.errors", "rlvr.verifiers.errors", "rlvr.sandboxes.base", "rlvr.service.dispatch.pool")


def _tree() -> list[type[RLVRError]]:
    for module in BRANCHES:
        importlib.import_module(module)
    found, todo = [], [RLVRError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


@pytest.mark.parametrize("cls", _tree(), ids=lambda cls: cls.__name__)
def test_every_error_is_drawn(cls: type[RLVRError]) -> None:
    drawing = (rlvr.errors.__doc__ or "").split("::")[1].split("\n\n")[1]
    assert cls.__name__ in re.findall(r"[A-Z][A-Za-z]+", drawing)


@pytest.mark.parametrize("cls", [c for c in _tree() if not c.__subclasses__()], ids=lambda cls: cls.__name__)
def test_every_leaf_has_its_own_status(cls: type[RLVRError]) -> None:
    assert http_status(cls("x")) != HTTP_STATUS[RLVRError]
