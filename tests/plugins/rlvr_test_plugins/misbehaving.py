"""Verifiers that misbehave on purpose: slow, crashing, or returning nonsense."""

import os
import time

from rlvr.verifiers.base import GradeInput, NoParams, Outcome, Verdict


class Sleepy:
    """Sleeps for `response` seconds (a float), then says correct."""

    name = "sleepy"
    version = "1"
    description = "sleeps"
    params_model = NoParams
    ground_truth_model = None
    default_deadline_s = 1.0

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        seconds = float(item.response)
        if seconds < 0:  # spin instead of sleeping: a CPU-bound hang
            while True:
                pass
        time.sleep(seconds)
        return Outcome(1.0, Verdict.CORRECT, f"slept {seconds}s")


class Crashy:
    """Kills its own worker process when the response says so; raises on 'raise'."""

    name = "crashy"
    version = "1"
    description = "crashes"
    params_model = NoParams
    ground_truth_model = None

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        if item.response == "exit":
            os._exit(3)
        if item.response == "raise":
            raise RuntimeError("verifier bug")
        return Outcome(1.0, Verdict.CORRECT, "fine")


class Liar:
    """Returns scores outside [0, 1] or NaN."""

    name = "liar"
    version = "1"
    description = "returns bad scores"
    params_model = NoParams
    ground_truth_model = None

    def verify(self, item: GradeInput, params: NoParams, ground_truth: None) -> Outcome:
        return Outcome(float(item.response), Verdict.CORRECT, "", {"nan": float("nan")})


class Tally:
    """Appends one line per verification to the file named by the ground truth."""

    name = "tally"
    version = "1"
    description = "counts its calls"
    params_model = NoParams
    ground_truth_model = str

    def verify(self, item: GradeInput, params: NoParams, ground_truth: str) -> Outcome:
        with open(ground_truth, "a") as f:
            f.write(item.response + "\n")
        time.sleep(0.2)  # long enough for concurrent duplicates to arrive while in flight
        return Outcome(1.0, Verdict.CORRECT, "counted")
