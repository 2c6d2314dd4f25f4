"""The documentation's examples run: every `>>>` example in docs/*.md as a doctest, and
every request body the README sends with curl against a real server."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import httpx
import pytest

from rlvr.sandboxes import isolation_report
from tests.services import require

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
# Pages whose examples run programs, and so need the sandbox isolated (as root).
SANDBOXED = {"writing-a-verifier.md"}
CURL_BODY = re.compile(r"curl -s http://127\.0\.0\.1:8000(/v1/grade) .*? -d '(.*?)'", re.S)


def test_the_docs_pages_are_there() -> None:
    names = {page.name for page in PAGES}
    assert {"architecture.md", "writing-a-verifier.md", "sandbox.md", "deployment.md", "trainers.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_the_examples_of_each_page_run(page: Path) -> None:
    if page.name in SANDBOXED:
        level = isolation_report()["isolation"]
        require(level in ("namespaces", "full"), f"the local sandbox isolated (here: {level!r})")
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failed, _ = doctest.testfile(str(page), module_relative=False, optionflags=flags, verbose=False)
    assert failed == 0, f"{page.name}: {failed} example(s) failed (doctest printed them above)"


def test_the_readmes_requests_grade_as_it_says(http: httpx.Client) -> None:
    bodies = CURL_BODY.findall((ROOT / "README.md").read_text())
    assert len(bodies) >= 2
    for path, body in bodies:
        items = json.loads(body)["items"]
        answer = http.post(path, json={"items": items})
        assert answer.status_code == 200, answer.text
        results = answer.json()["results"]
        assert not any(r["mask"] for r in results), results
        # Every README example's first item is a right answer.
        assert results[0]["reward"] == 1.0, results[0]
