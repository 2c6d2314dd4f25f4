"""How the `code` verifier compares, beside what common judges do: part of its
description in `GET /v1/verifiers`, so a trainer can see which judge its rewards match.

The rules are implemented in `rlvr.verifiers.code.compare`; the judges' columns are
their published checkers and harnesses (testlib's `ncmp`/`wcmp`/`lcmp`/`rcmp6`, used by
Codeforces and, in spirit, AtCoder's exact match with stated error bounds; APPS and TACO's
`testing_util.py`; LiveCodeBench's `lcb_runner/evaluation/testing_util.py`).
"""

COMPARISON_RULES = """\
Comparison rules (the expected value decides; `e` is the expected value):
| case | here | Codeforces / AtCoder checkers | APPS / TACO harness | LiveCodeBench harness |
|---|---|---|---|---|
| expected int (value, call) | exact: an int equal to e, or a float that is integral and exactly equal (3.0 for 3); \
123456700 fails for 123456789 | exact (ncmp reads 64-bit ints) | Python ==, then np.allclose (rtol 1e-5) on floats: \
123456700 passes | Python == (exact; 3.0 == 3) |
| expected float (value, call) | an int or float within 1e-6, absolute or relative; nan only nan, inf only itself | \
as the problem states, usually abs or rel error 1e-6 (rcmp6) | np.allclose (rtol 1e-5, atol 1e-8) | Python == (exact) |
| bool | True never stands in for an expected 1; an expected True/False in an assert (value) takes the int 1/0 \
too (a C-style predicate, as Python == in MBPP's harness), in call mode only itself (as LeetCode's serialised \
answers) | n/a | Python == (True == 1) | Python == (True == 1) |
| containers | same type (list is not tuple, except that call mode reads tuples as lists; set and frozenset are \
one family, as Python == has it), length and members; set members and dict keys by Python equality, then \
these rules; in call mode with `outputs_wrapped` (each output a list of one, as APPS and TACO store them), \
its element passes too | n/a | == with fallbacks (first element of a one-element list) | tuples become lists, then == |
| stdout lines | CRLF is LF; blank lines before and after the output ignored (LiveCodeBench strips it); the \
number of lines and of tokens per line must match | wcmp: tokens only, line breaks ignored; lcmp: per line | \
several fallbacks, down to comparing token sets | stripped lines, their number must match |
| stdout integer token in e | any numeral of exactly its value (007, +7, 7.0, 7., 0.7e1 for 7; -0 is 0), as \
LiveCodeBench's Decimal; no tolerance (10^18+1 fails for 10^18); inf, nan, hex, 1_000 are text | exact \
(wcmp) or same value (ncmp) | float tokens under np.allclose | Decimal equality (3.0 passes for 3) |
| stdout decimal token in e (1.5, 2e-3) | any numeral within 1e-6, absolute or relative (past the float \
range, 1e400: exactly its value) | abs or rel 1e-6 (rcmp6) | \
np.allclose | Decimal equality (exact) |
| other stdout tokens | exact text | exact text | exact, or as sets | exact text |
| HumanEval `check` (`assert candidate(...) == e`) | Python == on the returned plain value, as the check's own \
assert (True == 1, 3.0 == 3, floats exact); a value that is not plain data fails | n/a | n/a | n/a |
"""
