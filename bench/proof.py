"""`proof` verifier throughput against its anchor, `coqc` on one file per proof.

    .venv/bin/python -m bench.proof [--rounds 3]

Both sides check the same proofs of the test suite's theorems (tests/verifiers/proof),
one at a time. The verifier's item is four coqc runs (statement, response, check, and
the preamble where there is one) in the sandbox; the anchor compiles one file holding
the imports, preamble, statement and proof, unsandboxed and unchecked for assumptions.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from rlvr.verifiers.base import GradeInput
from rlvr.verifiers.proof import ProofGroundTruth, ProofParams, ProofVerifier, coq
from tests.verifiers.proof.theorems import THEOREMS


def _one_file(gt: dict[str, Any], proof: str) -> str:
    imports = "".join(f"Require Import {m}.\n" for m in gt.get("imports", []))
    stated = proof if gt["name"] in proof.split("Proof")[0] else f"{gt['statement']}\n{proof}"
    return f"{imports}{gt.get('preamble', '')}\n{stated.replace('```coq', '').replace('```', '')}\n"


def anchor(rounds: int) -> float:
    tool = coq.coqc()
    assert tool is not None, "coqc is not installed"
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for index, (gt, proof, _) in enumerate(THEOREMS):
            path = Path(folder) / f"T{index}.v"
            path.write_text(_one_file(gt, proof))
            files.append(path)
        started = time.perf_counter()
        for _ in range(rounds):
            for path in files:
                subprocess.run([tool, "-q", str(path)], cwd=folder, check=True, capture_output=True)
        return rounds * len(files) / (time.perf_counter() - started)


def verifier(rounds: int) -> tuple[float, int]:
    checker = ProofVerifier()
    params = ProofParams()
    prepared = [(checker.prepare(params, ProofGroundTruth(**gt)), proof) for gt, proof, _ in THEOREMS]
    checker.verify(GradeInput("", prepared[0][1]), params, prepared[0][0])  # start the sandbox untimed
    correct = 0
    started = time.perf_counter()
    for _ in range(rounds):
        for job, proof in prepared:
            correct += checker.verify(GradeInput("", proof), params, job).score == 1.0
    return rounds * len(prepared) / (time.perf_counter() - started), correct


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = anchor(args.rounds)
    rate, correct = verifier(args.rounds)
    total = args.rounds * len(THEOREMS)
    print(f"coqc per file (anchor):       {base:8.2f} files/s")
    ratio = rate / base
    print(f"proof verifier, sandboxed:    {rate:8.2f} items/s  ({ratio:.2f}x the anchor; {correct}/{total} correct)")


if __name__ == "__main__":
    main()
