"""Redis mode shares only final results: a masked failure or a deadline-dependent one
answers its own request, and the next request for the same item grades it again."""

from __future__ import annotations

from pathlib import Path

import httpx
import redis

from rlvr.service import redis_keys
from tests.services import Cluster


def grade(url: str, items: list[dict[str, object]], deadline_s: float | None = None) -> dict[str, object]:
    body: dict[str, object] = {"items": items}
    if deadline_s is not None:
        body["deadline_s"] = deadline_s
    r = httpx.post(url + "/v1/grade", json=body, timeout=120)
    r.raise_for_status()
    result: dict[str, object] = r.json()["results"][0]
    return result


def test_a_retry_after_a_masked_result_grades_again(cluster: Cluster, tmp_path: Path) -> None:
    url = cluster.api()
    cluster.worker()
    tally = tmp_path / "later" / "tally"
    item = {"response": "x", "verifier": "tally", "ground_truth": str(tally)}
    first = grade(url, [item])  # the directory is missing: the verifier raises
    assert first["mask"] is True and first["verdict"] == "error", first
    tally.parent.mkdir()
    second = grade(url, [item])
    assert second["mask"] is False and second["verdict"] == "correct", second
    assert tally.read_text().splitlines() == ["x"]
    # The final result is shared from now on; the masked one never was.
    third = grade(url, [item])
    assert third["verdict"] == "correct" and third["cached"] is True


def test_a_result_that_depends_on_the_deadline_is_not_shared(cluster: Cluster) -> None:
    url = cluster.api()
    cluster.worker()
    item = {"response": "1.5", "verifier": "sleepy"}
    short = grade(url, [item], deadline_s=0.3)
    assert short["verdict"] != "correct", short
    longer = grade(url, [item], deadline_s=10)
    assert longer["verdict"] == "correct" and longer["mask"] is False, longer
    client = redis.Redis.from_url(cluster.redis_url)
    stored = [client.get(k) for k in client.scan_iter(redis_keys.result("*"))]
    assert len(stored) == 1 and b'"correct"' in stored[0]
