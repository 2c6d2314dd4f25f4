"""What the hacking signals cost the verifiers that compute them, as a share of grading.

Each arm grades the same items in the same process, with the signals and without,
alternating, the best of `--rounds` each (the code arms: each batch's best, its two
settings back to back):

- math: `MathVerifier.verify` on the GRPO mix of `bench.math_grading` (warm caches), the
  function that computes the signals replaced by one that finds none;
- code: `CodeVerifier.verify_many` on HumanEval's canonical solutions and their mutants
  (real sandbox jobs, the local backend), batches of 16, with `CodeParams.signals` on and
  off: off, the jobs also run without the audit hook, so both costs are counted. Once
  as its check runs them (one job of values per item: the cheapest items there are, so
  the signals' largest share), once as stdin/stdout programs (`stdio`: a process per
  test, as competitive programming's tests and most code RL sets run);
- http: throughput (items/s) of HumanEval through a real `rlvr serve`, requests of
  `HTTP_CHUNK` items, each request's settings back to back as in the code arms.

    python -m bench.signals_cost [--items 4096] [--rounds 5]

Prints µs per item for each arm and the signals' cost as a percentage (the aim: < 2%).
On a shared 2-core machine, two identical settings differ by up to about 2.5% in the
code arms: read a figure with that in mind, and run it more than once. The math and
code arms also print the signals' CPU, timed where the verifier reads them, as a share of the CPU
all processes took to grade (`signals_cpu`): where grading keeps the machine busy, that
share is what the signals cost throughput, read directly rather than as the difference
of two noisy totals.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import itertools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from bench.math_grading import make_items
from rlvr.verifiers.base import BatchEntry, GradeInput
from rlvr.verifiers.code import CodeParams, GroundTruth
from rlvr.verifiers.code import verifier as code_verifier
from rlvr.verifiers.math import verifier as math_verifier

CODE_BATCH = 16
HTTP_CHUNK = 41


@contextmanager
def signals_off(module: Any, name: str) -> Iterator[None]:
    original = getattr(module, name)
    setattr(module, name, lambda *args, **kwargs: ())
    try:
        yield
    finally:
        setattr(module, name, original)


def best_of(rounds: int, run: Callable[[], None], module: Any, name: str) -> tuple[float, float]:
    """The best seconds with and without the signals, alternating arms."""
    with_signals, without = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        with_signals.append(time.perf_counter() - started)
        with signals_off(module, name):
            started = time.perf_counter()
            run()
            without.append(time.perf_counter() - started)
    return min(with_signals), min(without)


def math_arm(items: int) -> tuple[int, Callable[[], None]]:
    verifier, params = math_verifier.MathVerifier(), math_verifier.MathParams()
    inputs = [
        (GradeInput(it.prompt, it.response), verifier.prepare(params, it.gold)) for it in make_items(items, seed=11)
    ]

    def run() -> None:
        for item, gold in inputs:
            verifier.verify(item, params, gold)

    run()  # warm every cache: both arms then pay the same
    return len(inputs), run


def code_arm(stdio: bool = False) -> tuple[int, list[Callable[[], None]], list[Callable[[], None]]]:
    """The code items' count, and their batches with the signals on and with them
    off: HumanEval's canonical solutions and their mutants as its check runs them (one
    job of values per item, the cheapest kind), or with `stdio` as stdin/stdout programs
    with a process per test, as competitive programming's tests run."""
    from tests.verifiers.code.humaneval_data import canonical, ground_truth, load_problems, mutated

    verifier, adapter = code_verifier.CodeVerifier(), TypeAdapter(GroundTruth)
    problems = load_problems()
    cases = [stdio_case(problem) for problem in problems] if stdio else [None] * len(problems)

    def entries(signals: bool) -> list[BatchEntry]:
        params = CodeParams(timeout_s=10, signals=signals)
        made = []
        for problem, case in zip(problems, cases, strict=True):
            if stdio and case is None:
                continue
            truth = case if case is not None else ground_truth(problem)
            prepared = verifier.prepare(params, adapter.validate_python(truth))
            for program in (canonical(problem), mutated(problem)):
                program = program + STDIO_MAIN.format(name=problem["entry_point"]) if stdio else program
                made.append(BatchEntry(GradeInput("", f"```python\n{program}\n```"), params, prepared, 30.0))
        return made

    def batches(made: list[BatchEntry]) -> list[Callable[[], None]]:
        return [
            functools.partial(verifier.verify_many, made[start : start + CODE_BATCH])
            for start in range(0, len(made), CODE_BATCH)
        ]

    on_entries, off_entries = entries(True), entries(False)
    on, off = batches(on_entries), batches(off_entries)
    for run in (*on, *off):
        run()
    return len(on_entries), on, off


STDIO_MAIN = """

if __name__ == "__main__":
    import ast, sys
    print(repr({name}(*ast.literal_eval(sys.stdin.read()))))
"""


def stdio_case(problem: dict[str, Any]) -> dict[str, Any] | None:
    """A stdin/stdout ground truth for `problem`: each literal call of its check as an
    input (the arguments' repr) and what the canonical solution returns for it as the
    output; None where the check calls otherwise."""
    tree = ast.parse(problem["test"])
    calls = [
        node.left
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and isinstance(node.left.func, ast.Name)
    ]
    namespace: dict[str, Any] = {}
    exec(problem["prompt"] + problem["canonical_solution"], namespace)
    function = namespace[problem["entry_point"]]
    inputs, outputs = [], []
    for call in calls:
        try:
            arguments = tuple(ast.literal_eval(argument) for argument in call.args)
            outputs.append(repr(function(*arguments)) + "\n")
        except Exception:
            return None
        inputs.append(repr(arguments) + "\n")
    return {"inputs": inputs, "outputs": outputs} if len(inputs) >= 2 else None


def http_arm(rounds: int) -> tuple[int, float, float]:
    """HumanEval's canonical solutions through `POST /v1/grade` of a real `rlvr serve`
    (its worker processes, batching and cache, as trainers use it), in requests of
    `HTTP_CHUNK` items, each request's two settings of `signals` back to back
    (`interleaved`); every request's responses are new (a numbered comment), so no
    verdict comes from the cache. The items, and the seconds of all requests with and
    without the signals."""
    import httpx

    from bench.sandbox import _free_port, _start_server, _wait_ready, _warm_up_items, humaneval_items

    port = _free_port()
    server = _start_server(port)
    items = humaneval_items("0")
    chunks = [items[start : start + HTTP_CHUNK] for start in range(0, len(items), HTTP_CHUNK)]
    numbers = itertools.count(1)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            _wait_ready(client, server)
            client.post("/v1/grade", json={"items": _warm_up_items()})

            def request(chunk: list[dict[str, Any]], signals: bool) -> Callable[[], None]:
                def post() -> None:
                    tag = f"# {next(numbers)}\n```"
                    fresh = [
                        {**item, "response": item["response"].replace("# 0\n```", tag), "params": {"signals": signals}}
                        for item in chunk
                    ]
                    response = client.post("/v1/grade", json={"items": fresh})
                    if response.status_code != 200:
                        raise RuntimeError(f"/v1/grade answered {response.status_code}: {response.text[:300]}")

                return post

            on = [request(chunk, True) for chunk in chunks]
            off = [request(chunk, False) for chunk in chunks]
            for post in (*on, *off):
                post()
            return len(items), *interleaved(rounds, on, off)
    finally:
        server.terminate()
        server.wait(timeout=15)


def interleaved(rounds: int, on: list[Callable[[], None]], off: list[Callable[[], None]]) -> tuple[float, float]:
    """The seconds of all batches with and without the signals: each batch's best of
    `rounds`, its two settings run back to back (in turn first), so that both see the
    same machine; a run of a whole arm, then the other, lets this machine's drift of
    several percent over seconds into the difference."""
    best_on, best_off = [float("inf")] * len(on), [float("inf")] * len(off)
    for turn in range(rounds):
        for index, pair in enumerate(zip(on, off, strict=True)):
            for setting in pair if (turn + index) % 2 == 0 else pair[::-1]:
                started = time.perf_counter()
                setting()
                elapsed = time.perf_counter() - started
                best = best_on if setting is pair[0] else best_off
                best[index] = min(best[index], elapsed)
    return sum(best_on), sum(best_off)


def signals_cpu(rounds: int, on: list[Callable[[], None]], module: Any = code_verifier) -> tuple[float, float]:
    """The seconds the signals take where `module` reads them (its `_signals`), and
    the CPU seconds
    every process of the grading takes (this one, the sandbox's zygote, its jobs), over
    `rounds` runs of the batches `on`. In a service that grading keeps busy, as on this
    2-core machine, their ratio is the signals' share of throughput: a direct reading,
    where the wall-time difference of two settings moves with the machine by as much
    as the signals cost."""
    original, spent = module._signals, [0.0]

    def timed(*args: Any) -> tuple[str, ...]:
        # (The wall clock, as the CPU clock's system call would cost as much as the
        # math signals: the reading runs on one thread, without waits.)
        started = time.perf_counter()
        try:
            found: tuple[str, ...] = original(*args)
        finally:
            spent[0] += time.perf_counter() - started
        return found

    module._signals = timed
    try:
        started = _tree_cpu()
        for _ in range(rounds):
            for run in on:
                run()
        return spent[0], _tree_cpu() - started
    finally:
        module._signals = original


def _tree_cpu() -> float:
    """CPU seconds of this process and its descendants, live and ended (Linux's /proc:
    a process's `cutime` holds the children it has waited for)."""
    ticks, pending = 0, [os.getpid()]
    while pending:
        pid = pending.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except FileNotFoundError:
            continue  # ended meanwhile: its parent's `cutime` holds it
        ticks += sum(int(field) for field in fields[11:15])
        for task in tasks:
            with contextlib.suppress(FileNotFoundError):
                pending.extend(int(child) for child in (task / "children").read_text().split())
    return ticks / os.sysconf("SC_CLK_TCK")


def report(name: str, count: int, seconds: tuple[float, float]) -> None:
    with_signals, without = seconds
    cost = 100 * (with_signals - without) / without
    print(
        f"{name:5s} {count:6d} items  with signals {with_signals / count * 1e6:9.1f} µs/item  "
        f"without {without / count * 1e6:9.1f} µs/item  cost {cost:+.2f}%"
    )


def share(name: str, count: int, rounds: int, seconds: tuple[float, float]) -> None:
    spent, total = seconds
    print(
        f"{name:5s} the signals' time {spent / count / rounds * 1e6:9.1f} µs/item of "
        f"{total / count / rounds * 1e6:9.1f} µs/item of all processes' CPU: {100 * spent / total:.2f}%"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4096, help="math items")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    count, run = math_arm(args.items)
    report("math", count, best_of(args.rounds, run, math_verifier, "_signals"))
    share("math", count, args.rounds, signals_cpu(args.rounds, [run], math_verifier))
    for name, stdio in (("code", False), ("stdio", True)):
        count, on, off = code_arm(stdio=stdio)
        report(name, count, interleaved(args.rounds, on, off))
        share(name, count, args.rounds, signals_cpu(args.rounds, on))
    count, with_signals, without = http_arm(args.rounds)
    print(
        f"http  HumanEval through rlvr serve  with signals {count / with_signals:7.1f} items/s  "
        f"without {count / without:7.1f} items/s  cost {100 * (with_signals - without) / without:+.2f}%"
    )


if __name__ == "__main__":
    main()
