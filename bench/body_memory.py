"""Peak memory of the API process per request body, against the body's own size (the
anchor), and the longest `/healthz` answer while the body is read and parsed: hostile
shapes (millions of items or verifier references, free-form fields of empty containers,
unique keys, deep nesting) and legitimate ones at the limits, through a real `rlvr serve`.

    python -m bench.body_memory [--mb 48] [--shapes refs_bomb,metadata_lists,...] [--against DIR]

Each body goes to a fresh server, from a reset high-water mark (`/proc/<pid>/clear_refs`), so its
growth is the request's own: peak RSS (VmHWM) after it, less RSS before it. The body is
built here, outside the server; what the server holds of it counts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.services import Server

MiB = 1024 * 1024


def _repeat(piece: str, target_bytes: int) -> str:
    return ",".join([piece] * max(1, target_bytes // (len(piece) + 1)))


def _items(item: str, target_bytes: int) -> bytes:
    return ('{"items":[' + _repeat(item, target_bytes) + "]}").encode()


_REFUSED_IFEVAL = {"instruction_id_list": ["language:response_language"] * 20, "kwargs": [{"language": "z"}] * 20}


def _items_each(item: Callable[[int], str], target_bytes: int) -> bytes:
    """Items made by `item(i)`, distinct ones, to about `target_bytes`."""
    items: list[str] = []
    size = 0
    while size < target_bytes:
        items.append(item(len(items)))
        size += len(items[-1]) + 1
    return ('{"items":[' + ",".join(items) + "]}").encode()


def _call_based_groups(target_bytes: int) -> bytes:
    items = []
    size = 0
    while size < target_bytes and len(items) < 10_000:
        group = len(items) // 8
        tests = {"fn_name": f"f{group}", "inputs": [[j] for j in range(100)], "outputs": [[j * j] for j in range(100)]}
        item = {"response": "x" * 1500, "verifier": "format", "ground_truth": tests, "group": str(group)}
        items.append(item)
        size += len(json.dumps(item))
    return json.dumps({"items": items}).encode()


def _one_item(field: str, value_json: str) -> bytes:
    return ('{"items":[{"response":"x","verifier":"format","' + field + '":' + value_json + "}]}").encode()


SHAPES: dict[str, tuple[str, Callable[[int], bytes]]] = {
    # The shapes: 1,000 items x 3,000 references, a metadata field of empty lists.
    "refs_bomb": (
        "/v1/grade",
        lambda n: _items('{"response":"","verifier":[' + _repeat('{"name":"format"}', n // 1000) + "]}", n),
    ),
    "metadata_lists": ("/v1/grade", lambda n: _one_item("metadata", '{"a":[' + _repeat("[]", n) + "]}")),
    "items_bomb": ("/v1/grade", lambda n: _items('{"response":"","verifier":"format"}', n)),
    "ground_truth_dicts": ("/v1/grade", lambda n: _one_item("ground_truth", "[" + _repeat("{}", n) + "]")),
    "params_lists": ("/v1/grade", lambda n: _one_item("params", '{"a":[' + _repeat("[]", n) + "]}")),
    "unique_keys": (
        "/v1/grade",
        lambda n: _one_item("metadata", "{" + ",".join(f'"k{i}":0' for i in range(n // 9)) + "}"),
    ),
    "short_strings": ("/v1/grade", lambda n: _one_item("ground_truth", "[" + _repeat('"ab"', n) + "]")),
    "floats": ("/v1/grade", lambda n: _one_item("ground_truth", "[" + _repeat("0.5", n) + "]")),
    "deep": ("/v1/grade", lambda n: _one_item("metadata", "[" * 100_000 + "]" * 100_000)),
    "openrlhf_queries": ("/get_reward?verifier=format", lambda n: ('{"query":[' + _repeat('"ab"', n) + "]}").encode()),
    "run_code_files": (
        "/run_code",
        lambda n: (
            '{"code":"1","language":"python","files":{' + ",".join(f'"f{i}":""' for i in range(n // 10)) + "}}"
        ).encode(),
    ),
    # Classes a red team found: values the outline once skipped, JSON inside strings,
    # strings of wide characters, counts checked only after building.
    "unknown_field": ("/v1/grade", lambda n: _one_item("zzz", "[" + _repeat("[]", n) + "]")),
    "response_lists": (
        "/v1/grade",
        lambda n: ('{"items":[{"verifier":"format","response":[' + _repeat("[]", n) + "]}]}").encode(),
    ),
    "weight_lists": (
        "/v1/grade",
        lambda n: (
            '{"items":[{"response":"x","verifier":[{"name":"format","weight":[' + _repeat("[]", n) + "]}]}]}"
        ).encode(),
    ),
    "items_three_fields": (
        "/v1/grade",
        lambda n: _items('{"response":"","verifier":"format","ground_truth":0,"params":{},"metadata":{}}', n),
    ),
    "refs_with_params": (
        "/v1/grade",
        lambda n: _items('{"response":"","verifier":[' + _repeat('{"name":"a","params":{}}', n // 1000) + "]}", n),
    ),
    "openrlhf_label_json": (
        "/get_reward?verifier=format",
        lambda n: json.dumps({"query": ["x"], "labels": ['{"tests": [' + _repeat("[]", n) + "]}"]}).encode(),
    ),
    "slime_label_json": (
        "/v1/reward?verifier=format",
        lambda n: json.dumps({"response": "x", "label": '{"tests": [' + _repeat("[]", n) + "]}"}).encode(),
    ),
    "openrlhf_many_queries": (
        "/get_reward?verifier=format",
        lambda n: ('{"query":[' + _repeat('"0123456789"', n) + "]}").encode(),
    ),
    "emoji_ground_truth": (
        "/v1/grade",
        lambda n: (
            '{"items":[{"response":"x","verifier":"format","ground_truth":"\\ud83d\\ude00' + "a" * n + '"}]}'
        ).encode(),
    ),
    # Every field of 10,000 items and their 50,000 references invalid: an error each.
    "many_errors": (
        "/v1/grade",
        lambda n: _items(
            '{"response":1,"prompt":1,"id":1,"group":1,"params":1,"metadata":1,"verifier":['
            + ",".join(['{"name":"","weight":"x","params":1}'] * 5)
            + "]}",
            10_000 * 230,
        ),
    ),
    # One object of unique 20-character keys: refused by its keys' cost before it is read.
    "wide_object_ground_truth": (
        "/v1/grade",
        lambda n: _one_item("ground_truth", "{" + ",".join(f'"k{i:019d}":0' for i in range(n // 25)) + "}"),
    ),
    # Floats whose canonical JSON is three times their text (`1.5e15` is `1500000000000000.0`).
    "exponent_floats": ("/v1/grade", lambda n: _one_item("ground_truth", "[" + _repeat("1.5e15", n) + "]")),
    # Code ground truths of 999 keys the model does not know, each a distinct one.
    "code_unknown_keys": (
        "/v1/grade",
        lambda n: _items_each(
            lambda i: json.dumps(
                {"response": "x", "verifier": "code", "ground_truth": {f"k{i}_{j:058d}": 0 for j in range(999)}}
            ),
            n,
        ),
    ),
    # OpenRLHF's query: the prompt, a response one character of which is past U+FFFF, an
    # end-of-turn token.
    "openrlhf_wide_query": (
        "/get_reward?verifier=format",
        lambda n: json.dumps(
            {"query": ["P" + "a" * n + "\U0001f600<|im_end|>"], "prompts": ["P"]}, ensure_ascii=False
        ).encode(),
    ),
    # One item naming the math verifier 2,000 times with distinct params over a 64 KiB gold:
    # every unit's details echoed the gold whole (1.4 GiB for a 0.26 MiB body).
    "math_gold_echo": (
        "/v1/grade",
        lambda n: json.dumps(
            {
                "items": [
                    {
                        "response": "\\boxed{y}",
                        "ground_truth": "\\boxed{" + "x" * 65_536 + "}",
                        "verifier": [{"name": "math", "params": {"rel_tol": 1e-9 + j * 1e-15}} for j in range(2000)],
                    }
                ]
            }
        ).encode(),
    ),
    # Dense integers beside one character past U+FFFF: the key check's text of the body
    # was four bytes a character.
    "dense_ints_wide_response": (
        "/v1/grade",
        lambda n: (
            '{"items":[{"response":"\U0001f600","verifier":"format","ground_truth":[' + _repeat("100000", n) + "]}]}"
        ).encode(),
    ),
    # A call-based code test whose one argument is a long array of integers (a real shape:
    # LeetCode-style inputs), graded correct.
    "call_based_long_argument": (
        "/v1/grade",
        lambda n: json.dumps(
            {
                "items": [
                    {
                        "response": "```python\ndef f(a):\n    return len(a)\n```",
                        "verifier": "code",
                        "ground_truth": {"fn_name": "f", "inputs": [[list(range(n // 9))]], "outputs": [n // 9]},
                    }
                ]
            }
        ).encode(),
    ),
    # Items whose ground truth their verifier refuses, each refusal a long message (IFEval
    # lists every language it knows): an answer tells each item of its own.
    "refused_items": (
        "/v1/grade",
        lambda n: _items(json.dumps({"response": "x", "verifier": "ifeval", "ground_truth": _REFUSED_IFEVAL}), n),
    ),
    # The same refused ground truth named by 50,000 references of one item, strict or not.
    "refused_references": (
        "/v1/grade",
        lambda n: json.dumps(
            {"items": [{"response": "x", "verifier": [{"name": "ifeval"}] * 50_000, "ground_truth": _REFUSED_IFEVAL}]}
        ).encode(),
    ),
    # 50,000 references to one math unit: graded once, and scored under each label.
    "references_to_one_unit": (
        "/v1/grade",
        lambda n: json.dumps(
            {
                "items": [
                    {
                        "response": "\\boxed{" + "b" * 190 + "}",
                        "ground_truth": "\\boxed{" + "a" * 190 + "}",
                        "verifier": [{"name": "math"}] * 50_000,
                    }
                ]
            }
        ).encode(),
    ),
    "openrlhf_int_queries": ("/get_reward?verifier=format", lambda n: ('{"query":[' + _repeat("1", n) + "]}").encode()),
    # Legitimate bodies at the limits.
    "code_tests": (
        "/v1/grade",
        lambda n: _items(
            json.dumps(
                {"response": "x", "verifier": "format", "ground_truth": {"tests": ["assert f(1) == [1, 2]"] * 2000}}
            ),
            n,
        ),
    ),
    "max_refs_accepted": (
        "/v1/grade",
        lambda n: _items(
            '{"response":"' + "y" * 100 + '","verifier":[' + ",".join(['{"name":"format"}'] * 5) + "]}", 10_000 * 200
        ),
    ),
    # One ground truth beside 1,000 references differing only in their params.
    "refs_distinct_params": (
        "/v1/grade",
        lambda n: json.dumps(
            {
                "items": [
                    {
                        "response": "x",
                        "ground_truth": [0] * 40_000,
                        "verifier": [{"name": "format", "params": {"timeout_s": 0.5 + j * 1e-6}} for j in range(1000)],
                    }
                ]
            }
        ).encode(),
    ),
    # slime's one sample, its label the JSON text of call-based tests.
    "slime_call_based_label": (
        "/v1/reward?verifier=format",
        lambda n: json.dumps(
            {
                "response": "x",
                "label": json.dumps(
                    {"fn_name": "f", "inputs": [[j] * 100 for j in range(300)], "outputs": [[j] for j in range(300)]}
                ),
            }
        ).encode(),
    ),
    # A GRPO batch of call-based code tests (APPS, TACO): each group's ground truth is
    # sent with each of its 8 responses.
    "call_based_groups": ("/v1/grade", lambda n: _call_based_groups(n)),
    "long_responses": ("/v1/grade", lambda n: _items('{"response":"' + "z" * 50_000 + '","verifier":"format"}', n)),
}


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


@contextmanager
def _healthz_watch(url: str) -> Iterator[list[float]]:
    """The latencies of `/healthz`, polled every 50 ms while the block runs."""
    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(timeout=60) as client:
            while not stop.is_set():
                started = time.perf_counter()
                with contextlib.suppress(httpx.HTTPError):  # a timeout is a latency too
                    client.get(url + "/healthz")
                latencies.append(time.perf_counter() - started)
                stop.wait(0.05)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield latencies
    finally:
        stop.set()
        thread.join()


# One valid item for each verifier the shapes name: the first request naming a verifier
# loads its modules into the API process (sympy, IFEval's data), which is not a body's cost.
WARM_UP = {
    "items": [
        {"response": "x", "verifier": "math", "ground_truth": "1"},
        {"response": "x", "verifier": "code", "ground_truth": {"tests": ["assert True"]}},
        {
            "response": "x",
            "verifier": "ifeval",
            "ground_truth": {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        },
    ]
}


def measure(server: Server, path: str, body: bytes) -> dict[str, Any]:
    pid = server.proc.pid
    httpx.post(server.url + "/v1/validate", json=WARM_UP, timeout=120).raise_for_status()
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = _status(pid)["VmRSS"]
    with _healthz_watch(server.url) as latencies:
        r = httpx.post(server.url + path, content=body, headers={"content-type": "application/json"}, timeout=600)
    growth = _status(pid)["VmHWM"] - before
    message = r.json().get("error", {}).get("message", "") if r.status_code != 200 else ""
    return {
        "status": r.status_code,
        "body_mb": len(body) / MiB,
        "growth_mb": growth / MiB,
        "ratio": growth / len(body),
        "healthz_max_ms": 1000 * max(latencies, default=0.0),
        "message": message[:90],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=48.0, help="Target body size of the hostile shapes, MiB.")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="Comma-separated shape names.")
    parser.add_argument(
        "--against", type=Path, help="Another checkout (a `git worktree` of an older commit): its server too."
    )
    args = parser.parse_args()
    target = int(args.mb * MiB)
    sources: list[Path | None] = [None] if args.against is None else [args.against.resolve() / "src", None]
    print(f"{'shape':20} {'server':>7} {'status':>6} {'body MiB':>9} {'peak MiB':>9} {'x body':>7} {'healthz ms':>11}")
    for name in args.shapes.split(","):
        path, build = SHAPES[name]
        body = build(target)
        for source in sources:
            row = _measure_fresh(path, body, source)
            print(
                f"{name:20} {'against' if source else 'this':>7} {row['status']:>6} {row['body_mb']:>9.1f} "
                f"{row['growth_mb']:>9.1f} {row['ratio']:>7.2f} {row['healthz_max_ms']:>11.0f}  {row['message'][:70]}",
                flush=True,
            )


def _measure_fresh(path: str, body: bytes, source: Path | None) -> dict[str, Any]:
    # A fresh server each: memory an earlier request left to the allocator would hide this one's.
    with tempfile.TemporaryDirectory() as plugins:
        env = {"PYTHONPATH": f"{source}:{plugins}"} if source else None
        with Server(Path(plugins), "--workers", "1", env=env, cache_entries="0") as server:
            return measure(server, path, body)


if __name__ == "__main__":
    main()
