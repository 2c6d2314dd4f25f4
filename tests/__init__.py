"""rlvr's test suite. A regular package, so that `tests.services` is ours even where a
dependency (openrlhf 0.11.2) installs a top-level `tests` package into site-packages."""
