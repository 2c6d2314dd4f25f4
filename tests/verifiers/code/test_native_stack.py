"""A C++ program's stack may grow as judges let it: up to its memory limit.

The class: a compiled program ran under the default 8 MB stack, where Codeforces
gives 256 MB and most judges the memory limit, so a correct solution that recursed
deep (a DFS down a path of 10**6 nodes) died with SIGSEGV and scored 0. The stack
is memory like the heap: a program that recurses without end still fails, unmasked.
"""

from __future__ import annotations

import pytest

from tests.verifiers.code.conftest import grade
from tests.verifiers.code.test_formats import needs_gxx

pytestmark = [pytest.mark.usefixtures("isolated"), needs_gxx]

DFS = r"""#include <bits/stdc++.h>
using namespace std;
vector<vector<int>> adj; vector<long long> sub;
void dfs(int u, int p) {
    char buf[FRAME];
    snprintf(buf, sizeof buf, "%d", u);
    sub[u] = strlen(buf) > 0;
    for (int v : adj[u]) if (v != p) { dfs(v, u); sub[u] += sub[v]; }
}
int main() {
    int n; cin >> n; adj.resize(n); sub.resize(n);
    for (int i = 1; i < n; i++) { adj[i - 1].push_back(i); adj[i].push_back(i - 1); }
    dfs(0, -1);
    cout << sub[0] << "\n";
}
"""
MEMO = r"""#include <bits/stdc++.h>
using namespace std;
map<long long, long long> memo;
long long f(long long n) {
    if (n <= 1) return n;
    auto it = memo.find(n); if (it != memo.end()) return it->second;
    long long r = (f(n - 1) + 1) % 1000000007;
    memo[n] = r; return r;
}
int main() { long long n; cin >> n; cout << f(n) << "\n"; }
"""


@pytest.mark.parametrize(("depth", "frame"), [(200_000, 200), (1_000_000, 64), (500_000, 256), (100_000, 1024)])
def test_a_deep_dfs_passes(depth: int, frame: int) -> None:
    program = DFS.replace("FRAME", str(frame))
    gt = {"inputs": [f"{depth}\n"], "outputs": [f"{depth}\n"], "language": "cpp"}
    out = grade(f"```cpp\n{program}```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


def test_deep_memoised_recursion_passes() -> None:
    gt = {"inputs": ["300000\n"], "outputs": ["300000\n"], "language": "cpp"}
    out = grade(f"```cpp\n{MEMO}```", gt, timeout_s=10)
    assert out.score == 1.0, (out.verdict, out.reason)


@pytest.mark.parametrize("memory_mb", [64, 256])
def test_recursion_without_end_fails_unmasked(memory_mb: int) -> None:
    program = "int f(int n) { volatile char pad[512]; pad[0] = n; return f(n + 1) + pad[0]; }\n"
    program += "int main() { return f(0); }\n"
    gt = {"inputs": ["\n"], "outputs": ["0\n"], "language": "cpp"}
    out = grade(f"```cpp\n{program}```", gt, timeout_s=10, memory_mb=memory_mb)
    assert out.score == 0.0 and not out.mask, out.reason


def test_a_stack_past_the_memory_limit_fails() -> None:
    program = DFS.replace("FRAME", "1024")
    gt = {"inputs": ["1000000\n"], "outputs": ["1000000\n"], "language": "cpp"}
    out = grade(f"```cpp\n{program}```", gt, timeout_s=10, memory_mb=256)  # about 1.1 GB of stack
    assert out.score == 0.0 and not out.mask, out.reason


THREADS = {
    "std_thread": "thread t([&] { r = 2 * x; }); t.join();",
    "std_async": "r = async(launch::async, [&] { return 2 * x; }).get();",
    "many_threads": "vector<thread> ts; for (int i = 0; i < 8; i++) ts.emplace_back([&, i] { if (i == 0) r = 2 * x; });"
    " for (auto &t : ts) t.join();",
    "thread_recursing_deep": "thread t([&] { function<long long(int)> g = [&](int n) "
    "{ return n ? g(n - 1) + 2 : 0LL; }; r = g(x) / x * x; }); t.join();",
}


@pytest.mark.parametrize("memory_mb", [64, 512])
@pytest.mark.parametrize("name", sorted(THREADS))
def test_threads_start_under_any_memory_limit(name: str, memory_mb: int) -> None:
    """A thread's stack is sized by the stack limit: one as large as the memory limit
    would leave no room to start it (`std::system_error`, then abort)."""
    program = "#include <bits/stdc++.h>\nusing namespace std;\nint main() { long long x, r = 0; cin >> x; "
    program += THREADS[name] + ' cout << r << "\\n"; }\n'
    gt = {"inputs": ["21\n", "5000\n"], "outputs": ["42\n", "10000\n"], "language": "cpp"}
    out = grade(f"```cpp\n{program}```", gt, timeout_s=10, memory_mb=memory_mb)
    assert out.score == 1.0, (out.verdict, out.reason)
