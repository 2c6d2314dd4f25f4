"""`proof` verifier throughput against its anchor, `coqc` on one file per proof.

    .venv/bin/python -m bench.proof [--rounds 3] [--concurrency 2]

Both sides check the same proofs of the test suite's theorems (tests/verifiers/proof),
`concurrency` at a time, each theorem `rounds` times (a group of that many items per
ground truth). The verifier's item is a job of two coqc runs (response, check) and
coqchk's re-check, in the sandbox; each ground truth's statement (and preamble) is
compiled and re-checked once per group, in a job of its own, counted in its time.
The anchor compiles one file holding the imports, preamble, statement and proof,
unsandboxed, unchecked for assumptions and not re-checked.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, ProofVerifier, coq
from tests.verifiers.proof.theorems import THEOREMS


def _one_file(gt: dict[str, Any], proof: str) -> str:
    imports = "".join(f"Require Import {m}.\n" for m in gt.get("imports", []))
    stated = proof if gt["name"] in proof.split("Proof")[0] else f"{gt['statement']}\n{proof}"
    return f"{imports}{gt.get('preamble', '')}\n{stated.replace('```coq', '').replace('```', '')}\n"


def anchor(rounds: int, concurrency: int) -> float:
    tool = coq.coqc()
    assert tool is not None, "coqc is not installed"
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for index, (gt, proof, _) in enumerate(THEOREMS):
            # One folder per worker's copy: two coqc never write the same .vo.
            for copy in range(rounds):
                path = Path(folder) / f"T{index}_{copy}.v"
                path.write_text(_one_file(gt, proof))
                files.append(path)

        def compile_one(path: Path) -> None:
            subprocess.run([tool, "-q", str(path)], cwd=folder, check=True, capture_output=True)

        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(compile_one, files))
        return len(files) / (time.perf_counter() - started)


_CHECKER = ProofVerifier()
# A worker's first job starts its sandbox: done before the clock starts.
_WARM_UP = ({"statement": "Theorem warm_up : True.", "name": "warm_up"}, "Proof. exact I. Qed.", 1)


def _grade_group(group: tuple[dict[str, Any], str, int]) -> int:
    """One ground truth's items, in a worker process with its own verifier (and sandbox,
    which serves one caller at a time): how many scored 1."""
    gt, proof, rounds = group
    params = ProofParams()
    job = _CHECKER.prepare(params, ProofGroundTruth(**gt))
    correct = sum(_CHECKER.verify(GradeInput("", proof), params, job).score == 1.0 for _ in range(rounds))
    if group == _WARM_UP:
        time.sleep(1.0)  # so that each worker takes one warm-up
    return correct


def verifier(rounds: int, concurrency: int) -> tuple[float, int]:
    groups = [(gt, proof, rounds) for gt, proof, _ in THEOREMS]
    with ProcessPoolExecutor(concurrency) as pool:
        list(pool.map(_grade_group, [_WARM_UP] * concurrency))
        started = time.perf_counter()
        correct = sum(pool.map(_grade_group, groups))
        elapsed = time.perf_counter() - started
    return rounds * len(groups) / elapsed, correct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="items per ground truth")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    base = anchor(args.rounds, args.concurrency)
    rate, correct = verifier(args.rounds, args.concurrency)
    total = args.rounds * len(THEOREMS)
    print(f"{args.concurrency} at a time, {args.rounds} items per ground truth")
    print(f"coqc per file (anchor):            {base:8.2f} files/s")
    ratio = rate / base
    print(f"proof verifier, with coqchk:       {rate:8.2f} items/s  ({ratio:.2f}x; {correct}/{total} correct)")


if __name__ == "__main__":
    main()
