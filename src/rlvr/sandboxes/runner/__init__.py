"""The in-sandbox runner: the code that runs *inside* a sandbox, whatever isolates it.

It reads a job description on fd 0 (length-prefixed frames), runs the program, and
writes one JSON record per test on a dedicated channel (fd 3). It never sees expected
outputs: records carry what the program produced (values, stdout) and the grader
compares outside. Where a test's expectations must run next to the program (assert
tests, HumanEval `check`), the runner splits the job into two processes with different
uids: the untrusted program answers calls over a socket with plain data, and only the
trusted half holds the test code and the channel. See `rlvr.sandboxes.runner.split`.

`entry.main` runs one job, dispatching on its mode to `python`, `split` or `native`;
`core` is what they share. The backend (the local zygote) provides the isolation and
a `core.Privileges` object.
"""
