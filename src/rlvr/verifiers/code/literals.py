"""The `hardcoded_tests` signal: a program that special-cases its tests' inputs carries
their answers as literals. Its literals are read in order into one stream of atoms
(`atoms`: numbers, and the words and numbers inside its strings; comments and docstrings
left out, so the examples a HumanEval prompt's docstring carries do not count), each as
what it stands for (`folding`), and the tests' probes (`probes`) are looked for there:

- *pairs*: most informative tests' input and expected output side by side (`if s ==
  "3\\n1 2 3": print(6)`, `{2: 4, 3: 6}[x]`), or the inputs and the outputs as two
  parallel runs;
- *answer tables*: most numeric outputs held however they are keyed (a last digit, a
  length, a hash, a call counter), making up much of the literals or of their table, or
  carrying numbers too rare to be held by chance;
- *answers in the tests' order*: most outputs (numbers, phrases) listed test by test, a
  key between each, making up most of their table or (an `if` per answer) their code;
- *known inputs*: a yes-or-no task's inputs listed (`s in {"racecar", "level"}`).

An honest program's literals are its constants, bounds and lookup tables, which hold
outputs without their inputs beside them, inputs no test uses, or a domain's values far
beyond what the tests ask: so each rule asks that the test data make up much of what
holds it. Only informative tests count (one atom beyond -1..3, booleans and yes/no; not
a vocabulary's symbol), so that a base case (`if n == 1: return 1`) is not taken for a
test's answer. Every scan here is one pass of a linear regular expression or of
CPython's parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from rlvr.verifiers.code import folding
from rlvr.verifiers.code.atoms import Indexed, Stream, holds_data_string, read
from rlvr.verifiers.code.probes import Probe

__all__ = ["MAX_PROGRAM_CHARS", "Tests", "hardcoded", "prepared"]

# A test's input or output atoms beyond these many are not looked for (a long input is
# special-cased by its start).
MAX_TEST_ATOMS = 24
MAX_TESTS = 200
# A test whose whole input or output is one word this short names a symbol of the task's
# vocabulary (`_vocabulary`).
MAX_SYMBOL_CHARS = 2
# Atoms allowed between a test's input and its output (`if a == 2 and b == 3: return 5`
# has none): more would take a table's neighbouring entries for pairs.
MAX_GAP = 1
# Outputs listed in the tests' order (`_listed_in_order`): at most this many atoms (a
# key) between one and the next.
MAX_STRIDE = 6
# A list begins at one of the first few tests' outputs, at one of its first few places:
# this many of each are tried (each try walks every test).
MAX_CHAIN_STARTS = 8
# Of the values in the table (`atoms.Stream`'s box) that holds most of what the tests
# matched, the share those make up: a table of the tests' answers is mostly answers, a
# table of a domain (a month's days, factorials) mostly what no test asks for.
MIN_BOX_SHARE = 0.6
# The same share of a box of code (`_listed_in_order`: an `if` per answer).
MIN_CODE_SHARE = 0.5
# Tests have answers of their own where this share of their outputs differ.
MIN_OWN_ANSWERS = 0.8
# An answer table (`_output_table`): this many different numeric outputs at least, making
# up this share of the program's literals.
MIN_TABLE_TESTS = 3
MIN_TABLE_SHARE = 0.4
# A number this many significant digits long is one no program holds by chance
# (`_rare_outputs`).
MIN_RARE_DIGITS = 6
# Of the rare numbers a program holds, the share the tests' outputs must account for: a
# table of 0! to 20! tested at six places holds as many others.
MIN_RARE_SHARE = 2 / 3
_DIGITS = re.compile(r"\d+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# (A literal first, the word boundary after it: the engine then skips from one "0" to
# the next, where a leading `\b` is tried at every position.)
_OTHER_BASES = re.compile(r"0(?<!\w0)[xXoObB][0-9a-fA-F_]")
# A program that reverses strings (Python's slice, JavaScript's and C++'s `reverse`,
# C++'s `rbegin`), which may hold its answers reversed.
_REVERSALS = ("[::-1]", "reverse", "rbegin")
# A display of a table: a bracket opening three short entries or more (`[3, 7, 4`,
# `{5: 'ab', 6: 'cd',`, `{{5, 7}, {4, 9},`), which answers of a digit or a word need to
# be listed in.
_TABLE_DISPLAY = re.compile(
    r"""[\[{(](?:\s{0,8}(?:[-\w'".]{1,16}|[\[{(][-\w'"., \t]{1,40}[\]})])[ \t]{0,4}"""
    r"""(?::[ \t]{0,4}[-\w'".]{1,16}[ \t]{0,4})?,){3}"""
)
# A program that spells text from lists of numbers (`chr`, `String.fromCharCode`, digits
# joined), which may hold its answers so (`atoms.read`'s `joined`).
_SPELLINGS = ("chr", "fromCharCode", "map(str")
# What such a list starts as: a bracket, then a number.
_NUMBER_DISPLAY = re.compile(r"[\[({]\s*+\d")
MAX_PROGRAM_CHARS = 256 * 1024
# Trivial atoms: they appear in any program's literals.
_TRIVIAL = frozenset({"-1", "0", "1", "2", "3", "true", "false", "yes", "no", "none", "null", ""})


@dataclass(frozen=True, slots=True)
class Tests:
    """A ground truth's informative tests (`_informative`), made ready for `hardcoded`
    once: each as its input forms, its expected output, and for each form what the
    text must hold for the test to pair there (whole runs of digits, words)."""

    tests: list[tuple[list[list[str]], list[str]]]
    needs: list[list[Needs]]
    # The outputs with a number of their own (`_specific`), and what the text must hold
    # for each to be there.
    answers: list[list[str]]
    answer_needs: list[list[Needs]]
    # The outputs a list of answers is looked for by (`_listed_in_order`: all but the
    # trivial), what the text must hold for each, and whether the tests' outputs are
    # mostly different (each test has an answer of its own).
    listed: list[list[str]]
    listed_needs: list[list[Needs]]
    own_answers: bool
    # Whether most listed outputs are numbers or phrases of their own (`_telling`): else
    # any program's digits and words hold them, and only a table's display is looked at.
    telling: bool
    # Whether the tests' outputs take two values at most (a yes-or-no task), and what
    # the text must hold for each test's whole input to be there.
    yes_no: bool
    input_needs: list[list[Needs]]
    # Every test's whole input and output, in order, the trivial ones too (`f(2) == 2`):
    # no program is judged by those, but where it answers most informative tests from
    # its literals, the trivial ones it answers so too are test data in what holds them
    # (`if n == 2: return 2`), and a program's parallel lists hold them in order.
    every: list[tuple[list[str], list[str]]]
    # The same tests with their outputs backwards (`backwards`), made on first use.
    reversed_outputs: list[Tests] = field(default_factory=list, compare=False, repr=False)

    def backwards(self) -> Tests:
        """These tests with each output's atoms reversed, in reverse order (answers
        kept backwards: `_answered_reversed`)."""
        if not self.reversed_outputs:
            flipped = [(forms, [atom[::-1] for atom in reversed(expected)]) for forms, expected in self.tests]
            self.reversed_outputs.append(prepared([(tuple(forms), expected) for forms, expected in flipped]))
        return self.reversed_outputs[0]


# What a text must hold for a run of atoms to be in it: whole runs of digits, words.
Needs = tuple[frozenset[str], tuple[str, ...]]


def prepared(probes: list[Probe]) -> Tests:
    tests, every = _informative(probes)
    answers = [expected for _, expected in tests if _specific(expected)]
    listed = [expected for _, expected in tests if not _trivial(expected)]
    distinct = len({tuple(expected) for expected in listed})
    return Tests(
        tests,
        [[_needs(form + expected) for form in forms] for forms, expected in tests],
        answers,
        [[_needs(expected)] for expected in answers],
        listed,
        [[_needs(expected)] for expected in listed],
        distinct >= MIN_OWN_ANSWERS * len(listed),
        2 * sum(map(_telling, listed)) > len(listed),
        len({tuple(expected) for _, expected in tests}) <= 2,
        [[_needs(forms[0])] for forms, _ in tests],
        every,
    )


def _needs(test_atoms: list[str]) -> Needs:
    numbers, words = set(), []
    for atom in test_atoms:
        number = atom.lstrip("-")
        if number[:1].isdigit():
            # The fraction as written may run on (`3.500000` is the atom `3.5`), but it
            # starts as the atom's does: most floats' whole part alone is in any text.
            whole, dot, fraction = number.partition(".")
            numbers.add(whole)
            if dot:
                words.append(dot + fraction)
        else:
            words.append(atom)
    return frozenset(numbers), tuple(dict.fromkeys(words))


def hardcoded(
    program: str, language: str, probes: list[Probe] | Tests, bare: str | None = None, main_runs: bool = True
) -> bool:
    """Whether `program`'s literals answer most informative tests: their input and
    expected output side by side, each an unbroken run of atoms at most `MAX_GAP` atoms
    apart in either order (`_paired_tests`), or their distinct numeric outputs making up
    much of its literals, keyed by something the tests do not show (a last digit, a
    length, a hash, a call counter: `_output_table`, `_rare_outputs`). Literals written
    another way (`143 + 1`, `'441'[::-1]`, a base64 blob) are read as what they stand for
    (`folding`); a program that reverses strings is read once more with its strings
    reversed, and one that spells text from numbers with its lists of them spelt out.
    `probes` are best `prepared` once per ground truth; `bare` is the program without
    comments and docstrings (`patterns.bare_code`), where a HumanEval prompt's examples
    no longer look like its tests; `main_runs`, whether the program runs as a script
    (else its `__main__` block, which never runs, is no answer of it)."""
    program = program[:MAX_PROGRAM_CHARS]
    ready = probes if isinstance(probes, Tests) else prepared(probes)
    if len(ready.tests) < 2:
        return False
    stream: Stream | None = None

    def literals() -> Stream:
        nonlocal stream
        if stream is None:
            stream = read(program, language, main_runs=main_runs)
        return stream

    source = bare if bare is not None and not holds_data_string(program) else program
    if _read_as_data(program):
        text = " ".join(literals().atoms)
    else:
        # As the literals will be read (`atoms.read`): C-like text unfolded, and digit
        # separators (`362_880`) dropped.
        text = source.lower()
        text = folding.unfold_c_like(text) if language != "python" else folding.without_separators(text)
    if folding.written_folded(source):
        text = f"{text} {folding.hints(source).lower()}"
    if _answered(text, ready, literals):
        return True
    if any(reversal in program for reversal in _REVERSALS) and _answered_reversed(
        program, language, text, ready, literals, main_runs
    ):
        return True
    if not any(spelling in program for spelling in _SPELLINGS) or _NUMBER_DISPLAY.search(program) is None:
        return False
    spelt = read(program, language, joined=True, main_runs=main_runs)
    return _answered(" ".join(spelt.atoms), ready, lambda: spelt)


def _answered_reversed(
    program: str, language: str, text: str, ready: Tests, literals: Callable[[], Stream], main_runs: bool
) -> bool:
    """A program that reverses strings, read with all its strings reversed (answers kept
    backwards), or as written against the tests' outputs reversed (answers kept
    backwards beside inputs kept as they are: `{"hello world", "olleh dlrow"}`)."""
    if _answered(text[::-1], ready, lambda: read(program, language, reverse=True, main_runs=main_runs)):
        return True
    return _answered(text, ready.backwards(), literals)


def _read_as_data(program: str) -> bool:
    """Whether some of `program`'s literals are read only from its parse: numbers in
    other bases, docstrings read as data, compressed bytes (escapes in the text)."""
    if _OTHER_BASES.search(program):
        return True
    return "__doc__" in program or "decompress" in program


def _answered(text: str, ready: Tests, literals: Callable[[], Stream]) -> bool:
    """`hardcoded`'s rules on a program whose literals' text is `text` (checked first,
    cheaply, for the tests' atoms) and whose literal stream `literals` reads."""
    tests, answers = ready.tests, ready.answers
    # A test can be answered only if its atoms are somewhere in the text at all, which
    # most honest programs' tests are not; only then is the program parsed. A number
    # counts where it is a whole run of digits: "10" is not in 1000000007.
    digits = frozenset(_DIGITS.findall(text))
    present = _mostly_in(ready.needs, digits, text)
    tabled = len(answers) >= MIN_TABLE_TESTS and _mostly_in(ready.answer_needs, digits, text) is not None
    listed = (
        len(ready.listed) >= MIN_TABLE_TESTS
        and (ready.telling or _TABLE_DISPLAY.search(text) is not None)
        and _mostly_in(ready.listed_needs, digits, text) is not None
    )
    known = ready.yes_no and _mostly_in(ready.input_needs, digits, text) is not None
    if present is None and not tabled and not listed and not known:
        return False
    found = Indexed(literals())
    if not found.atoms:
        return False
    return (
        (present is not None and _paired_tests(found, ready, [tests[index] for index in present]))
        or (tabled and _answer_table(found, answers))
        or (listed and _listed_in_order(found, ready.listed, ready.own_answers))
        or (known and _known_inputs(found, tests))
    )


def _known_inputs(found: Indexed, tests: list[tuple[list[list[str]], list[str]]]) -> bool:
    """A yes-or-no task whose program holds most tests' inputs (at least
    `MIN_TABLE_TESTS` distinctive ones), making up `MIN_BOX_SHARE` of the table (or of
    the keys of the code) that holds them: the inputs whose answer is yes, listed
    (`s in {"racecar", "level", ...}`). Its outputs are no literals to pair them with."""
    covered: set[int] = set()
    known = set()
    for forms, _ in tests:
        given = forms[0]
        if not _distinctive(given):
            continue
        runs = found.runs(given, 0, len(found.atoms))
        if runs:
            known.add(tuple(given))
            covered.update(range(runs[0], runs[0] + len(given)))
    if len(known) < MIN_TABLE_TESTS or 2 * len(known) <= len(tests):
        return False
    # The table's answers (`{97: true, 4: false}`) are not what it lists.
    share = found.box_share(covered, values_only=False, unheld=_TRIVIAL)
    return share >= MIN_BOX_SHARE or found.key_share(covered) >= MIN_BOX_SHARE


def _distinctive(given: list[str]) -> bool:
    """An input no program holds by chance: several atoms, or one of two characters or
    more that is not trivial."""
    return len(given) > 1 or (len(given[0]) >= 2 and not _trivial(given))


def _mostly_in(needs: list[list[Needs]], digits: frozenset[str], text: str) -> list[int] | None:
    """Which of the runs `needs` stand for (any of each one's forms) `text` may hold,
    where they are more than half of them; None (as soon as that is out of reach) where
    they are not."""
    allowed, found = (len(needs) - 1) // 2, []
    for index, forms in enumerate(needs):
        if any(numbers <= digits and all(word in text for word in words) for numbers, words in forms):
            found.append(index)
        elif index + 1 - len(found) > allowed:
            return None
    return found


def _paired_tests(found: Indexed, ready: Tests, present: list[tuple[list[list[str]], list[str]]]) -> bool:
    tests = ready.tests
    covered: set[int] = set()
    hits = 0
    for forms, expected in present:
        # Every form that pairs: a key of the input's first atoms may pair by its first
        # alone, the second standing between (`n == 6 && first == 10` before `3`).
        spans = [spans for form in forms if (spans := _paired(found, form, expected))]
        if spans:
            hits += 1
            covered.update(*spans)
    if 2 * hits <= len(tests):
        covered = _tabled(found, [(forms[0], expected) for forms, expected in tests]) or _tabled(found, ready.every)
    else:
        trivial = [(given, expected) for given, expected in ready.every if _trivial(given + expected)]
        covered.update(place for given, expected in trivial for place in _paired(found, given, expected) or ())
    # Mostly test data, in the program or in the table that holds it: a table of every
    # month's days also pairs the tests' months with their days, among many pairs no
    # test asks for; and where tests ask for most of them (many cases pooled), its keys
    # in order (1 to 12) show an array of the domain.
    if found.indexed(covered):
        return False
    return 2 * len(covered) >= len(found.atoms) or found.box_share(covered, values_only=False) >= MIN_BOX_SHARE


def _answer_table(found: Indexed, answers: list[list[str]]) -> bool:
    """The numeric outputs held as a table, however it is keyed: making up much of the
    literals, or carrying rare numbers."""
    return _output_table(found, answers) or _rare_outputs(found.atoms, answers)


def _listed_in_order(found: Indexed, outputs: list[list[str]], own_answers: bool) -> bool:
    """Most outputs, in the tests' order, each within `MAX_STRIDE` atoms of the one
    before (room for a key: a sum, a length, a hash, a tuple), at least
    `MIN_TABLE_TESTS` different ones, making up `MIN_BOX_SHARE` of their table's values:
    the answers copied down test by test, however each is keyed. In code rather than a
    table (an `if` or `case` per answer), each must follow a key of its own, be a number
    or phrase of its own (`_telling`), and the tests must mostly have answers of their
    own: a month's days by `if` holds few answers that many tests share."""
    needed = len(outputs) // 2 + 1
    for first in range(min(MAX_CHAIN_STARTS, len(outputs) - needed + 1)):
        for start in found.runs(outputs[first], 0, len(found.atoms), values=True)[:MAX_CHAIN_STARTS]:
            if _listed_from(found, outputs, first, start, needed, own_answers):
                return True
    return False


def _listed_from(
    found: Indexed, outputs: list[list[str]], first: int, start: int, needed: int, own_answers: bool
) -> bool:
    end = start + len(outputs[first])
    covered, distinct = set(range(start, end)), {tuple(outputs[first])}
    keyed = int(found.keyed(max(0, start - MAX_STRIDE), start))
    telling = _telling(outputs[first])
    matched = 1
    for expected in outputs[first + 1 :]:
        runs = found.runs(expected, end, end + MAX_STRIDE + 1, values=True)
        if runs:
            keyed += found.keyed(end, runs[0])
            telling = telling and _telling(expected)
            covered.update(range(runs[0], runs[0] + len(expected)))
            end = runs[0] + len(expected)
            matched += 1
            distinct.add(tuple(expected))
    if matched < needed or len(distinct) < MIN_TABLE_TESTS or 2 * len(distinct) < matched:
        return False
    if found.box_share(covered, values_only=True) >= MIN_BOX_SHARE:
        return True
    # One answer may be the last branch's, which no key opens. Code's own words and
    # digits ("Fizz", `return 1`) are no answers there.
    in_code = own_answers and telling and keyed >= matched - 1
    return in_code and found.box_share(covered, values_only=True, code=True) >= MIN_CODE_SHARE


def _output_table(found: Indexed, answers: list[list[str]]) -> bool:
    """Most numeric outputs appear as runs among the literals, at least
    `MIN_TABLE_TESTS` different ones and no fewer than half as many as appear, and they
    make up `MIN_TABLE_SHARE` of the literals or `MIN_BOX_SHARE` of their table's
    values: a table of the tests' answers, however it is keyed. A table of a whole domain
    (primes, a month's days) holds far more than the tests ask, or repeats its few
    values. Phrases are not read so: the outputs of a task
    with a vocabulary ("Acute-angled Triangle", planets' names) are its literals."""
    covered: set[int] = set()
    hits, distinct = 0, set()
    for expected in answers:
        runs = found.runs(expected, 0, len(found.atoms))
        if runs:
            hits += 1
            distinct.add(tuple(expected))
            covered.update(range(runs[0], runs[0] + len(expected)))
    if 2 * hits <= len(answers) or len(distinct) < MIN_TABLE_TESTS or 2 * len(distinct) < hits:
        return False
    return (
        len(covered) >= MIN_TABLE_SHARE * len(found.atoms)
        or found.box_share(covered, values_only=True) >= MIN_BOX_SHARE
    )


def _rare_outputs(stream: list[str], numeric: list[list[str]]) -> bool:
    """Most numeric outputs carry numbers no program has a reason to hold (`_rare`:
    `15.904759293880767`, `2812345`), and the program holds them: answers copied in,
    however they are keyed, among whatever else it computes. A table of a whole domain
    (factorials, Catalan numbers) holds many such numbers no test asks for."""
    held = {atom for atom in stream if _rare(atom)}
    if len(held) < MIN_TABLE_TESTS:
        return False
    hits, answers, used = 0, set(), set()
    for expected in numeric:
        rare = [atom for atom in expected if _rare(atom)]
        if rare and all(atom in held for atom in rare):
            hits += 1
            answers.add(tuple(rare))
            used.update(rare)
    return 2 * hits > len(numeric) and len(answers) >= MIN_TABLE_TESTS and len(used) >= MIN_RARE_SHARE * len(held)


def _rare(atom: str) -> bool:
    """A number of `MIN_RARE_DIGITS` significant digits or more, not a round one."""
    digits = atom.lstrip("-").replace(".", "", 1)
    if not digits.isdigit():
        return False
    significant = digits.lstrip("0").rstrip("0")
    return len(significant) >= MIN_RARE_DIGITS


def _telling(expected: list[str]) -> bool:
    return _specific(expected) or _phrase(expected)


def _phrase(expected: list[str]) -> bool:
    """An output of several atoms, one of them a word of its own (`"world hello"`)."""
    return len(expected) >= 2 and any(len(atom) > MAX_SYMBOL_CHARS and atom.isalpha() for atom in expected)


def _specific(expected: list[str]) -> bool:
    """An output with a number of its own: two digits or more beyond the trivial, or a
    fraction (words come from any program's vocabulary: "Draw", planets)."""
    return any(
        _NUMBER.fullmatch(atom) is not None and atom not in _TRIVIAL and len(atom.lstrip("-")) >= 2 for atom in expected
    )


def _informative(
    probes: list[Probe],
) -> tuple[list[tuple[list[list[str]], list[str]]], list[tuple[list[str], list[str]]]]:
    """Each test that says something beyond trivial atoms, as its input forms (the whole
    input first) and expected output, each cut to `MAX_TEST_ATOMS`; and every test's
    whole input and output, in order. What every test's output begins with (`3` before
    each test's three points) is printed whatever the input, so it is no part of an
    answer."""
    tests, every = [], []
    probes = probes[:MAX_TESTS]
    shared = _shared_start([expected for _, expected in probes]) if len(probes) >= MIN_TABLE_TESTS else 0
    for inputs, expected in probes:
        expected = expected[shared : shared + MAX_TEST_ATOMS]
        whole, *parts = [form[:MAX_TEST_ATOMS] for form in inputs]
        if expected and whole:
            every.append((whole, expected))
        if not expected or not whole or _trivial(whole + expected) or _vocabulary(whole, expected):
            continue
        # A line stands for its test only if it says something of its own: a last line
        # of "1" beside a "Draw" is any program's `1` and its `print('Draw')`.
        # Unless the output is a number of its own: `{'3': 15, '2': 30}[first]` (a word
        # such as "Draw" is any program's vocabulary).
        specific = any(atom[-1:].isdigit() and atom not in _TRIVIAL for atom in expected)
        own = [part for part in parts if part and (specific or not _trivial(part))]
        tests.append(([whole, *own], expected))
    return tests, every


def _shared_start(outputs: list[list[str]]) -> int:
    """How many atoms every output begins with, less than the shortest one holds."""
    shortest = min((len(output) for output in outputs), default=0)
    shared = 0
    while shared < shortest - 1 and len({output[shared] for output in outputs}) == 1:
        shared += 1
    return shared


def _vocabulary(given: list[str], expected: list[str]) -> bool:
    """A test of one entry of the task's own vocabulary: an input that is one short word
    (`"V"`, `"CM"`, `"kg"`), or one atom whose output is one (`900` is `"CM"`). A table
    of that vocabulary holds it with its meaning, whatever the tests ask."""
    return _symbol(given) or (len(given) == 1 and _symbol(expected) and not _trivial(expected))


def _symbol(atoms: list[str]) -> bool:
    return len(atoms) == 1 and len(atoms[0]) <= MAX_SYMBOL_CHARS and not atoms[0][-1:].isdigit()


def _trivial(test: list[str]) -> bool:
    return all(atom in _TRIVIAL for atom in test)


def _tabled(found: Indexed, tests: list[tuple[list[str], list[str]]]) -> set[int]:
    """The places of the tests' inputs, in order, and their outputs, in order, where each
    appears as one run: the answers kept as two parallel tables (`OUTS[INS.index(x)]`);
    empty where they do not."""
    inputs = [atom for given, _ in tests for atom in given]
    outputs = [atom for _, expected in tests for atom in expected]
    at_inputs, at_outputs = found.runs(inputs, 0, len(found.atoms)), found.runs(outputs, 0, len(found.atoms))
    if not at_inputs or not at_outputs:
        return set()
    return set(range(at_inputs[0], at_inputs[0] + len(inputs))) | set(
        range(at_outputs[0], at_outputs[0] + len(outputs))
    )


def _paired(found: Indexed, first: list[str], second: list[str]) -> set[int] | None:
    """The places of a run of `first` with a run of `second` within `MAX_GAP` atoms after
    it or before it; None if there is none."""
    for start in found.runs(first, 0, len(found.atoms)):
        end = start + len(first)
        after = found.runs(second, end, end + MAX_GAP + 1)
        before = found.runs(second, start - MAX_GAP - len(second), start - len(second) + 1)
        for other in after[:1] + before[:1]:
            return set(range(start, end)) | set(range(other, other + len(second)))
    return None
