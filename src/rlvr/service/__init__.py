"""rlvr's HTTP service: batch grading over pluggable verifiers."""
