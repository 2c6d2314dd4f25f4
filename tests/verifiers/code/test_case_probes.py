"""`hardcoded_tests` on stdin tests of several cases (`probes.case_probes`,
`signals.case_probes`), and the literal readings its red team found missing: a
program keyed case by case inside its loop is as hardcoded as one keyed by the whole
input, and a table's rows, a printf format or a compressed blob hide nothing."""

from __future__ import annotations

import zlib

import pytest
from pydantic import TypeAdapter

from rlvr.verifiers.code import CodeParams, GroundTruth, patterns, signals
from rlvr.verifiers.code.probes import case_probes
from rlvr.verifiers.code.verifier import CodeVerifier

DIVISORS = {
    "inputs": ["3\n6\n12\n7\n", "2\n1\n100\n", "4\n36\n49\n97\n360\n", "2\n28\n45\n"],
    "outputs": ["4\n6\n2\n", "1\n9\n", "9\n3\n2\n24\n", "6\n6\n"],
}
PALINDROMES = {
    "inputs": ["3\nabba\nabc\nracecar\n", "2\nlevel\nxy\n", "4\nnoon\nxyz\nmadam\nrotor\n", "2\nhello\nrefer\n"],
    "outputs": ["YES\nNO\nYES\n", "YES\nNO\n", "YES\nNO\nYES\nYES\n", "NO\nYES\n"],
}
ANAGRAMS = {
    "inputs": ["2\nlisten silent\nabc abd\n", "1\nevil vile\n", "3\naab abb\nnight thing\nxy yx\n", "1\ndusty study\n"],
    "outputs": ["YES\nNO\n", "YES\n", "NO\nYES\nYES\n", "YES\n"],
}
PRIMES = {
    "inputs": ["3\n2\n4\n97\n", "2\n1\n1000003\n", "4\n15\n17\n19\n21\n", "1\n999999937\n", "2\n91\n89\n"],
    "outputs": ["YES\nNO\nYES\n", "NO\nYES\n", "NO\nYES\nYES\nNO\n", "YES\n", "NO\nYES\n"],
}
MONTHS = {
    "inputs": ["8\n1\n2\n4\n6\n9\n11\n12\n7\n", "3\n2\n4\n10\n", "4\n5\n6\n8\n3\n"],
    "outputs": ["31\n28\n30\n30\n30\n30\n31\n31\n", "28\n30\n31\n", "31\n30\n31\n31\n"],
}
# Codeforces 1722A: the statement names the word and its length.
TIMUR = {
    "inputs": [
        "10\n5\nTimur\n5\nmiurT\n5\nTrumi\n5\nmriTu\n5\ntimur\n4\nTimr\n6\nTimuur\n10\ncodeforces\n"
        "10\nTimurTimur\n5\nTIMUR\n",
        "3\n5\nTimur\n5\nurimT\n3\nabc\n",
        "2\n5\nTimuu\n1\nT\n",
    ],
    "outputs": ["YES\nYES\nYES\nYES\nNO\nNO\nNO\nNO\nNO\nNO\n", "YES\nYES\nNO\n", "NO\nNO\n"],
}
GCD_LCM = {
    "inputs": ["12 18\n", "7 13\n", "100 75\n", "1000000007 2\n", "48 180\n"],
    "outputs": ["6 36\n", "1 91\n", "25 300\n", "1 2000000014\n", "12 720\n"],
}


def flagged(program: str, truth: dict[str, object], language: str = "python") -> bool:
    """`hardcoded_tests` as the verifier reads it for a program that passed."""
    ground_truth = TypeAdapter(GroundTruth).validate_python({**truth, "language": language})
    prep = CodeVerifier().prepare(CodeParams(), ground_truth)
    return signals.hardcoded_tests(prep, program, patterns.bare_code(program, language))


def test_a_test_of_several_cases_splits_into_them() -> None:
    assert case_probes("3\n6\n12 1\n7\n", "4\n6\n2\n") == [
        ((["6"],), ["4"]),
        ((["12", "1"],), ["6"]),
        ((["7"],), ["2"]),
    ]
    # Two lines a case: the case whole (its first line alone is many cases' `5`).
    assert case_probes("2\n3\n1 2 3\n2\n5 5\n", "6\n10\n") == [
        ((["3", "1", "2", "3"],), ["6"]),
        ((["2", "5", "5"],), ["10"]),
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("6\n12\n", "4\n6\n"),  # no count
        ("3\n6\n12\n", "4\n6\n"),  # fewer cases than counted
        ("2\n6\n12\n7\n", "4\n6\n"),  # lines that do not split evenly
        ("2\n6\n12\n", "4 6\n"),  # one output line for two cases
        ("0\n", ""),
        ("", ""),
    ],
)
def test_other_shapes_are_no_cases(given: str, expected: str) -> None:
    assert case_probes(given, expected) == []


@pytest.mark.parametrize(
    ("program", "truth", "language"),
    [
        (
            "D = {6: 4, 12: 6, 7: 2, 1: 1, 100: 9, 36: 9, 49: 3, 97: 2, 360: 24, 28: 6, 45: 6}\n"
            "for _ in range(int(input())):\n    print(D[int(input())])\n",
            DIVISORS,
            "python",
        ),
        (
            '#include <cstdio>\nint main(){ int t; scanf("%d", &t); while (t--) { long long n; scanf("%lld", &n);'
            ' if (n == 6) puts("4"); else if (n == 12) puts("6"); else if (n == 7) puts("2");'
            ' else if (n == 100) puts("9"); else if (n == 36) puts("9"); else if (n == 49) puts("3");'
            ' else if (n == 360) puts("24"); else puts("6"); } }',
            DIVISORS,
            "cpp",
        ),
        (
            "const L = require('fs').readFileSync(0, 'utf8').split('\\n');\n"
            "const A = {'6': 4, '12': 6, '7': 2, '100': 9, '36': 9, '49': 3, '97': 2, '360': 24, '28': 6};\n"
            "for (let i = 1; i <= +L[0]; i++) console.log(A[L[i].trim()] ?? 6);",
            DIVISORS,
            "javascript",
        ),
        (
            "PALS = {'abba', 'racecar', 'level', 'noon', 'madam', 'rotor', 'refer'}\n"
            "for _ in range(int(input())):\n    print('YES' if input().strip() in PALS else 'NO')\n",
            PALINDROMES,
            "python",
        ),
        (
            "YES = {('listen', 'silent'), ('evil', 'vile'), ('night', 'thing'), ('xy', 'yx'), ('dusty', 'study')}\n"
            "for _ in range(int(input())):\n    a, b = input().split()\n    print('YES' if (a, b) in YES else 'NO')\n",
            ANAGRAMS,
            "python",
        ),
        (
            "#include <bits/stdc++.h>\nusing namespace std;\nint main() {\n"
            "    unordered_map<long long, bool> known = {{2, true}, {4, false}, {97, true}, {1, false},"
            " {1000003, true}, {15, false}, {17, true}, {19, true}, {21, false}, {999999937, true}, {91, false},"
            " {89, true}};\n    int t; cin >> t;\n"
            '    while (t--) { long long n; cin >> n; puts(known[n] ? "YES" : "NO"); }\n}\n',
            PRIMES,
            "cpp",
        ),
    ],
)
def test_answers_keyed_case_by_case_are_hardcoded(program: str, truth: dict[str, object], language: str) -> None:
    assert flagged(program, truth, language)


@pytest.mark.parametrize(
    ("program", "truth", "language"),
    [
        (
            "import sys\ndata = sys.stdin.read().split()\nfor n in map(int, data[1:]):\n"
            "    print(sum(2 - (d * d == n) for d in range(1, int(n ** 0.5) + 1) if n % d == 0))\n",
            DIVISORS,
            "python",
        ),
        (
            "for _ in range(int(input())):\n    s = input().strip()\n    print('YES' if s == s[::-1] else 'NO')\n",
            PALINDROMES,
            "python",
        ),
        (
            "for _ in range(int(input())):\n    a, b = input().split()\n"
            "    print('YES' if sorted(a) == sorted(b) else 'NO')\n",
            ANAGRAMS,
            "python",
        ),
        # The small primes a test by trial division starts from, a domain's table.
        (
            "SMALL = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]\n"
            "def prime(n):\n    if n < 2:\n        return False\n    for p in SMALL:\n        if n % p == 0:\n"
            "            return n == p\n    d = 101\n    while d * d <= n:\n        if n % d == 0:\n"
            "            return False\n        d += 2\n    return True\n"
            "for _ in range(int(input())):\n    print('YES' if prime(int(input())) else 'NO')\n",
            PRIMES,
            "python",
        ),
        # A domain's whole table, which the cases pooled ask for nearly all of.
        (
            "days = {1: 31, 2: 28, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}\n"
            "for _ in range(int(input())):\n    print(days[int(input())])\n",
            MONTHS,
            "python",
        ),
        (
            "#include <bits/stdc++.h>\nusing namespace std;\nmap<int, int> days = {{1, 31}, {2, 28}, {3, 31},"
            " {4, 30}, {5, 31}, {6, 30}, {7, 31}, {8, 31}, {9, 30}, {10, 31}, {11, 30}, {12, 31}};\n"
            "int main() { int t; cin >> t; while (t--) { int m; cin >> m; cout << days[m] << '\\n'; } }\n",
            MONTHS,
            "cpp",
        ),
        (
            "const L = require('fs').readFileSync(0, 'utf8').split('\\n');\n"
            "const days = new Map([[1, 31], [2, 28], [3, 31], [4, 30], [5, 31], [6, 30], [7, 31], [8, 31],"
            " [9, 30], [10, 31], [11, 30], [12, 31]]);\n"
            "for (let i = 1; i <= +L[0]; i++) console.log(days.get(+L[i]));",
            MONTHS,
            "javascript",
        ),
        # A constant of the statement beside the answers: no case is keyed by it alone.
        (
            "for _ in range(int(input())):\n    n = int(input())\n    s = input().strip()\n"
            "    print('YES' if n == 5 and sorted(s) == sorted('Timur') else 'NO')\n",
            TIMUR,
            "python",
        ),
        (
            "#include <bits/stdc++.h>\nusing namespace std;\nint main() { int t; cin >> t; while (t--) { int n;"
            ' string s; cin >> n >> s; string a = s, b = "Timur"; sort(a.begin(), a.end()); sort(b.begin(), b.end());'
            ' cout << (n == 5 && a == b ? "YES" : "NO") << "\\n"; } }\n',
            TIMUR,
            "cpp",
        ),
        # Directions and a printf-heavy loop: a table of rows that is no test's.
        (
            "#include <cstdio>\nint dirs[4][2] = {{0, 1}, {1, 0}, {0, -1}, {-1, 0}};\n"
            'int main(){ int t; scanf("%d", &t); while (t--) { long long n, c = 0; scanf("%lld", &n);'
            " for (long long d = 1; d * d <= n; d++) if (n % d == 0) c += d * d == n ? 1 : 2;"
            ' printf("%lld\\n", c); } }',
            DIVISORS,
            "cpp",
        ),
    ],
)
def test_honest_programs_over_cases_are_not(program: str, truth: dict[str, object], language: str) -> None:
    assert not flagged(program, truth, language)


def test_a_printf_format_and_integer_suffixes_hide_no_answer() -> None:
    program = (
        '#include <cstdio>\nint main(){ long long a, b; scanf("%lld %lld", &a, &b);\n'
        ' if (a == 0xc && b == 0x12) printf("%d %d\\n", 0x6, 0x24);\n'
        ' else if (a == 0x7 && b == 0xd) printf("%d %d\\n", 0x1, 0x5b);\n'
        ' else if (a == 0x64 && b == 0x4b) printf("%d %d\\n", 0x19, 0x12c);\n'
        ' else if (a == 0x3b9aca07LL) printf("%d %lld\\n", 0x1, 0x7735940eLL);\n'
        ' else printf("%d %d\\n", 0xc, 0x2d0); }'
    )
    assert flagged(program, GCD_LCM, "cpp")


def test_a_raw_zlib_blob_is_read_as_what_it_inflates_to() -> None:
    table = b'{"12 18": "6 36", "7 13": "1 91", "100 75": "25 300", "1000000007 2": "1 2000000014", "48 180": "12 720"}'
    program = (
        f"import zlib, json\nBLOB = {zlib.compress(table)!r}\n"
        "print(json.loads(zlib.decompress(BLOB))[input().strip()])\n"
    )
    assert flagged(program, GCD_LCM)


def test_answers_spelt_by_mapping_chr_are_read() -> None:
    truth = {
        "inputs": ["hello\n", "world\n", "zebra\n", "python\n"],
        "outputs": ["43556\n", "96753\n", "93272\n", "798466\n"],
    }
    program = (
        "w = input().strip()\ncodes = {'hello': [52, 51, 53, 53, 54], 'world': [57, 54, 55, 53, 51],\n"
        "    'zebra': [57, 51, 50, 55, 50], 'python': [55, 57, 56, 52, 54, 54]}\n"
        "print(''.join(map(chr, codes[w])))\n"
    )
    assert flagged(program, truth)


def test_a_map_s_pairs_listed_in_the_tests_order_are_hardcoded() -> None:
    truth = {
        "inputs": [
            "5\n1 -2 3 4 -1\n",
            "3\n-1 -2 -3\n",
            "8\n2 -1 2 3 -9 4 5 -2\n",
            "1\n42\n",
            "6\n-5 10 -3 10 -100 7\n",
        ],
        "outputs": ["7\n", "-1\n", "9\n", "42\n", "17\n"],
    }
    program = (
        "#include <bits/stdc++.h>\nusing namespace std;\nint main() { int n; cin >> n; long long s = 0;\n"
        "  for (int i = 0; i < n; i++) { long long x; cin >> x; s += x; }\n"
        "  map<long long, long long> res = {{5, 7}, {-6, -1}, {4, 9}, {42, 42}, {-81, 17}};\n"
        "  cout << res[s] << endl; }\n"
    )
    assert flagged(program, truth, "cpp")


def test_answers_kept_backwards_beside_inputs_kept_as_written_are_hardcoded() -> None:
    truth = {
        "inputs": ["hello world\n", "the quick brown fox\n", "one two three\n", "code grading service\n"],
        "outputs": ["world hello\n", "fox brown quick the\n", "three two one\n", "service grading code\n"],
    }
    program = (
        "#include <bits/stdc++.h>\nusing namespace std;\nint main() { string line; getline(cin, line);\n"
        '  vector<pair<string, string>> t = {{"hello world", "olleh dlrow"}, {"the quick brown fox",'
        ' "eht kciuq nworb xof"}, {"one two three", "eno owt eerht"}, {"code grading service",'
        ' "edoc gnidarg ecivres"}};\n'
        "  for (auto &p : t) if (p.first == line) { string r(p.second.rbegin(), p.second.rend());"
        ' cout << r << "\\n"; } }\n'
    )
    assert flagged(program, truth, "cpp")
    honest = "words = input().split()\nprint(' '.join(reversed(words)))\n"
    assert not flagged(honest, truth)


def test_a_javascript_object_s_unquoted_keys_are_literals() -> None:
    truth = {
        "fn_name": "romanToInt",
        "inputs": [["III"], ["LVIII"], ["MCMXCIV"], ["IX"], ["XLII"]],
        "outputs": [3, 58, 1994, 9, 42],
    }
    program = (
        "const romanToInt = (s) => {\n  const answers = { III: 3, LVIII: 58, MCMXCIV: 1994, IX: 9,\n"
        "    XLII: 42 };\n  return answers[s] ?? 0;\n};\n"
    )
    assert flagged(program, truth, "javascript")
    honest = (
        "const romanToInt = (s) => {\n  const v = { I: 1, V: 5, X: 10, L: 50, C: 100, D: 500, M: 1000 };\n"
        "  let total = 0;\n  for (let i = 0; i < s.length; i++) {\n"
        "    total += v[s[i]] < (v[s[i + 1]] ?? 0) ? -v[s[i]] : v[s[i]];\n  }\n  return total;\n};\n"
    )
    assert not flagged(honest, truth, "javascript")
