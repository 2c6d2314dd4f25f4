"""rlvr's HTTP service: batch grading over pluggable verifiers."""

__version__ = "0.1.0"
