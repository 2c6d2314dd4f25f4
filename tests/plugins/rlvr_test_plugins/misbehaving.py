"""Verifiers that misbehave on purpose: slow, crashing, or returning nonsense."""

import os
import time
from typing import Annotated, Any

from pydantic import BeforeValidator

from rlvr import GradeInput, NoParams, Outcome, Verdict


class _TestPlugin:
    """What the plugins here declare alike; each adds its name and behaviour."""

    version = "1"
    params_model = NoParams
    ground_truth_model: Any = None


class Sleepy(_TestPlugin):
    """Sleeps for `response` seconds (a float), then says correct."""

    name = "sleepy"
    description = "sleeps"
    default_deadline_s = 1.0

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        seconds = float(item.response)
        if seconds < 0:  # spin instead of sleeping: a CPU-bound hang
            while True:
                pass
        time.sleep(seconds)
        return Outcome(1.0, Verdict.CORRECT, f"slept {seconds}s")


class Burner(_TestPlugin):
    """Uses `response` seconds (a float) of its process's CPU, then says correct."""

    name = "burner"
    description = "burns CPU"

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        until = time.process_time() + float(item.response)
        while time.process_time() < until:
            pass
        return Outcome(1.0, Verdict.CORRECT, f"burned {item.response}s")


def _fragile_truth(value: Any) -> str:
    if value == "boom":
        raise TypeError("a validator with a bug")  # pydantic lets TypeError through
    return str(value)


class Fragile(_TestPlugin):
    """Its ground-truth model raises TypeError (not a validation error) on "boom"."""

    name = "fragile"
    description = "has a ground-truth validator that raises"
    ground_truth_model = Annotated[str, BeforeValidator(_fragile_truth)]

    def verify(self, item: GradeInput, params: NoParams, ground_truth: str) -> Outcome:
        return Outcome(float(item.response == ground_truth), Verdict.CORRECT, "")


class Crashy(_TestPlugin):
    """Kills its own worker process when the response says so; raises on 'raise'."""

    name = "crashy"
    description = "crashes"

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        if item.response == "exit":
            os._exit(3)
        if item.response == "raise":
            raise RuntimeError("verifier bug")
        return Outcome(1.0, Verdict.CORRECT, "fine")


class Liar(_TestPlugin):
    """Returns scores outside [0, 1] or NaN."""

    name = "liar"
    description = "returns bad scores"

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        return Outcome(float(item.response), Verdict.CORRECT, "", {"nan": float("nan")})


class Tally(_TestPlugin):
    """Appends one line per verification to the file named by the ground truth."""

    name = "tally"
    description = "counts its calls"
    ground_truth_model = str

    def verify(self, item: GradeInput, params: NoParams, ground_truth: str) -> Outcome:
        with open(ground_truth, "a") as f:
            f.write(item.response + "\n")
        time.sleep(0.2)  # long enough for concurrent duplicates to arrive while in flight
        return Outcome(1.0, Verdict.CORRECT, "counted")


class Batchy(_TestPlugin):
    """Verifies many at once (`verify_many`), misbehaving there as the response says:
    `alone` (asks to be verified alone), `hang`, `spin`, `exit`, `raise`; anything else
    is correct. Alone (`verify`), every response is correct. Each call appends a line
    to the file named by the ground truth: `batch <n>` or `alone <response>`."""

    name = "batchy"
    description = "verifies in batches"
    ground_truth_model = str
    default_deadline_s = 1.0
    max_batch = 4

    def verify(self, item: GradeInput, params: NoParams, ground_truth: str) -> Outcome:
        with open(ground_truth, "a") as f:
            f.write(f"alone {item.response}\n")
        return Outcome(1.0, Verdict.CORRECT, "alone")

    def verify_many(self, entries: Any) -> list[Outcome | None]:
        with open(entries[0].ground_truth, "a") as f:
            f.write(f"batch {len(entries)}\n")
        responses = [entry.item.response for entry in entries]
        if "hang" in responses:
            time.sleep(3600)
        if "spin" in responses:
            while True:
                pass
        if "exit" in responses:
            os._exit(3)
        if "raise" in responses:
            raise RuntimeError("batch bug")
        return [None if r == "alone" else Outcome(1.0, Verdict.CORRECT, f"batch of {len(entries)}") for r in responses]
