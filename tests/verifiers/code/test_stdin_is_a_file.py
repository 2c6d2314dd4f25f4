"""A script's stdin is a file, as `python solution.py < input.txt` gives it.

The class: stdin was a pipe, whose `fstat` size is 0 and which cannot be mapped or
rewound. The fast-input idioms of competitive programming read the whole input by its
size (`os.read(0, os.fstat(0).st_size)`, PyRival's templates) or map it (`mmap` of fd
0), and read nothing from a pipe: correct programs scored 0. And a program that
rewrapped its stdin (`io.TextIOWrapper(sys.stdin.buffer)`) dropped the first wrapper,
which closed the buffer the two shared, where Python's `sys.__stdin__` keeps it alive.
"""

from __future__ import annotations

import pytest

from tests.verifiers.code.conftest import grade

pytestmark = pytest.mark.usefixtures("isolated")

# Each test: the count, then that many numbers; the answer is their sum.
INPUTS = ["3\n1 2 3\n", "1\n-5\n", "4\n10 20 30 40\n", "0\n\n"]
OUTPUTS = ["6\n", "-5\n", "100\n", "0\n"]
STDIO = {"inputs": INPUTS, "outputs": OUTPUTS}
SUM_OF_TOKENS = "print(sum(map(int, data.split()[1:])))\n"

PYTHON_READERS = {
    "fstat_size": "import os\ndata = os.read(0, os.fstat(0).st_size)\n",
    "pyrival_readline": (
        "import io, os\ninput = io.BytesIO(os.read(0, os.fstat(0).st_size)).readline\n"
        "n = int(input())\ndata = b'0 ' + input()\n"
    ),
    "mmap_fd0": "import mmap\ndata = mmap.mmap(0, 0, access=mmap.ACCESS_READ)[:] if __import__('os').fstat(0).st_size "
    "else b''\n",
    "mmap_stdin_fileno": (
        "import mmap, os, sys\nsize = os.fstat(sys.stdin.fileno()).st_size\n"
        "data = mmap.mmap(sys.stdin.fileno(), size, prot=mmap.PROT_READ)[:] if size else b''\n"
    ),
    "seek_and_read_again": (
        "import sys\nfirst = sys.stdin.read()\nsys.stdin.seek(0)\ndata = sys.stdin.read()\nassert data == first\n"
    ),
    "lseek_fd0": "import os\nos.read(0, 1)\nos.lseek(0, 0, os.SEEK_SET)\ndata = os.read(0, 1 << 20)\n",
    "size_matches_read": (
        "import os, sys\nsize = os.fstat(0).st_size\ndata = sys.stdin.buffer.read()\nassert len(data) == size\n"
    ),
    "rewrap_text": (
        "import io, sys\nsys.stdin = io.TextIOWrapper(sys.stdin.buffer, encoding='utf-8')\ndata = sys.stdin.read()\n"
    ),
    "rewrap_then_input": (
        "import io, sys\nsys.stdin = io.TextIOWrapper(sys.stdin.buffer, encoding='utf-8')\n"
        "n = int(input())\ndata = '0 ' + (input() if n else '')\n"
    ),
    "detach": "import io, sys\nsys.stdin = io.TextIOWrapper(sys.stdin.detach())\ndata = sys.stdin.read()\n",
    "codecs_reader": "import codecs, sys\ndata = codecs.getreader('utf-8')(sys.stdin.buffer).read()\n",
    "open_fd0": "data = open(0).read()\n",
    "back_to_dunder": (
        "import io, sys\nsys.stdin = io.StringIO('9 9 9')\nsys.stdin = sys.__stdin__\ndata = sys.stdin.read()\n"
    ),
    "readlines": "import sys\ndata = ' '.join(sys.stdin.readlines())\n",
}


@pytest.mark.parametrize("reader", sorted(PYTHON_READERS))
def test_python_reads_its_input_however_it_asks(reader: str) -> None:
    program = PYTHON_READERS[reader] + SUM_OF_TOKENS
    out = grade(f"```python\n{program}```", STDIO)
    assert (out.score, out.mask) == (1.0, False), (out.verdict, out.reason)


def test_a_large_input_is_read_whole_by_its_size() -> None:
    numbers = list(range(200_000))
    text = f"{len(numbers)}\n{' '.join(map(str, numbers))}\n"
    gt = {"inputs": [text], "outputs": [f"{sum(numbers)}\n"]}
    out = grade(f"```python\n{PYTHON_READERS['pyrival_readline']}{SUM_OF_TOKENS}```", gt)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_each_test_gets_its_own_input() -> None:
    """The input is the program's to read and even to write: a test that overwrites
    its stdin changes no other test's."""
    program = "import os\ndata = os.read(0, os.fstat(0).st_size)\nos.lseek(0, 0, 0)\nos.write(0, b'9 9 9 9 9')\n"
    out = grade(f"```python\n{program}{SUM_OF_TOKENS}```", STDIO)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_a_wrong_sum_still_fails() -> None:
    program = PYTHON_READERS["fstat_size"] + "print(sum(map(int, data.split())))\n"  # counts the count too
    out = grade(f"```python\n{program}```", STDIO)
    assert out.score == 0.0 and not out.mask, out.reason


CPP_MMAP = r"""#include <bits/stdc++.h>
#include <sys/mman.h>
#include <sys/stat.h>
int main() {
    struct stat st; fstat(0, &st);
    std::string data;
    if (st.st_size > 0) {
        char *p = (char *)mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, 0, 0);
        if (p == MAP_FAILED) return 1;
        data.assign(p, st.st_size);
    }
    std::istringstream in(data);
    long long n, x, s = 0; in >> n;
    while (n-- > 0 && in >> x) s += x;
    std::cout << s << "\n";
}
"""
JS_FSTAT = """const fs = require('fs');
const size = fs.fstatSync(0).size;
const buf = Buffer.alloc(size);
if (size) fs.readSync(0, buf, 0, size, 0);
const t = buf.toString().split(/\\s+/).filter(Boolean).map(Number);
console.log(t.slice(1).reduce((a, b) => a + b, 0));
"""


@pytest.mark.parametrize(("language", "program"), [("cpp", CPP_MMAP), ("javascript", JS_FSTAT)], ids=["cpp", "js"])
def test_native_programs_read_their_input_by_its_size(language: str, program: str) -> None:
    out = grade(f"```{language}\n{program}```", {**STDIO, "language": language}, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.usefixtures("code_backend")
@pytest.mark.parametrize("reader", ["pyrival_readline", "mmap_fd0", "rewrap_then_input"])
def test_on_each_backend(reader: str) -> None:
    out = grade(f"```python\n{PYTHON_READERS[reader]}{SUM_OF_TOKENS}```", STDIO)
    assert out.score == 1.0, (out.verdict, out.reason)
