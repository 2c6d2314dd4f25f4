"""Sessions across API replicas on one real Redis: a session's calls reach the replica
that holds it from any replica, ending by prefix reaches every replica, and a replica
that dies takes its sessions with it: calls for them answer `session_lost`, promptly."""

from __future__ import annotations

import concurrent.futures
import time

import httpx

from tests.services import Cluster


def test_any_replica_reaches_a_session_held_by_another(cluster: Cluster) -> None:
    a, b = cluster.api(), cluster.api()
    cluster.worker()  # grades what the session wrote
    with httpx.Client(base_url=a, timeout=30) as http_a, httpx.Client(base_url=b, timeout=30) as http_b:
        session = http_a.post("/v1/sessions", json={"tag": "batch-1/t0"}).json()["id"]
        assert http_b.post(f"/v1/sessions/{session}/run", json={"code": "x = 20"}).json()["status"] == "ok"
        assert http_a.post(f"/v1/sessions/{session}/run", json={"code": "x + 1"}).json()["value"] == "21"
        ran = http_b.post(f"/v1/sessions/{session}/run", json={"code": "print(x * 2); x * 3"}).json()
        assert (ran["stdout"], ran["value"]) == ("40\n", "60")
        # Errors come back as the holder raised them.
        timeout = http_b.post(f"/v1/sessions/{session}/run", json={"code": "while True: pass", "timeout_s": 0.3})
        assert timeout.json()["status"] == "timeout"
        http_b.post(f"/v1/sessions/{session}/run", json={"code": "open('f.txt', 'w').write('abc')"})
        item = {"response_file": "f.txt", "verifier": "format"}
        graded = http_b.post(f"/v1/sessions/{session}/grade", json=item)
        assert graded.status_code == 200 and graded.json()["results"][0]["verdict"] == "incorrect"
        missing = http_b.post(f"/v1/sessions/{session}/grade", json=item | {"response_file": "nope"})
        assert missing.status_code == 422 and missing.json()["error"]["code"] == "session_file"
        assert http_b.delete(f"/v1/sessions/{session}").status_code == 204
        gone = http_a.post(f"/v1/sessions/{session}/run", json={"code": "x"})
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "session_not_found"
        assert http_b.delete(f"/v1/sessions/{session}").status_code == 404


def test_ending_by_prefix_reaches_every_replica(cluster: Cluster) -> None:
    a, b = cluster.api(), cluster.api()
    with httpx.Client(base_url=a, timeout=30) as http_a, httpx.Client(base_url=b, timeout=30) as http_b:
        on_a = [http_a.post("/v1/sessions", json={"tag": f"step-3/{i}"}).json()["id"] for i in range(2)]
        on_b = [http_b.post("/v1/sessions", json={"tag": f"step-3/{i}"}).json()["id"] for i in range(3)]
        kept = http_b.post("/v1/sessions", json={"tag": "step-4/0"}).json()["id"]
        assert http_a.request("DELETE", "/v1/sessions", params={"prefix": "step-3/"}).json() == {"ended": 5}
        for session in on_a + on_b:
            assert http_a.post(f"/v1/sessions/{session}/run", json={"code": "1"}).status_code == 404
        assert http_a.post(f"/v1/sessions/{kept}/run", json={"code": "1"}).json()["value"] == "1"


def test_a_dead_replicas_sessions_are_lost_not_hung(cluster: Cluster) -> None:
    a, b = cluster.api(), cluster.api()
    with httpx.Client(base_url=a, timeout=30) as http_a, httpx.Client(base_url=b, timeout=30) as http_b:
        session = http_a.post("/v1/sessions", json={}).json()["id"]
        slow = http_a.post("/v1/sessions", json={}).json()["id"]
        http_b.post(f"/v1/sessions/{session}/run", json={"code": "x = 1"})
        pool = concurrent.futures.ThreadPoolExecutor(1)
        in_flight = pool.submit(
            http_b.post, f"/v1/sessions/{slow}/run", json={"code": "import time; time.sleep(60)", "timeout_s": 120}
        )
        time.sleep(1.0)
        cluster.apis[0].proc.kill()
        cluster.apis[0].proc.wait()
        # A call in flight when its holder died is answered once the holder's lease lapses,
        # a few seconds on (the timeout only stops a hang from hanging the suite).
        assert in_flight.result(timeout=60).json()["error"]["code"] == "session_lost"
        lost = http_b.post(f"/v1/sessions/{session}/run", json={"code": "x"})
        assert lost.status_code == 410 and lost.json()["error"]["code"] == "session_lost"
        assert http_b.post(f"/v1/sessions/{slow}/run", json={"code": "1"}).json()["error"]["code"] == "session_lost"
        assert http_b.post("/v1/sessions", json={}).status_code == 201
