"""`compile` through a real `rlvr serve`: listed, a mixed batch, disallowed flags masked
(a 422 with `strict`)."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.usefixtures("isolated", "toolchain")


def test_listed_with_languages(http: httpx.Client) -> None:
    listed = {v["name"]: v for v in http.get("/v1/verifiers").json()["verifiers"]}
    entry = listed["compile"]
    assert entry["source"] == "builtin"
    assert entry["availability"]["languages"] == dict.fromkeys(("python", "c", "cpp", "javascript", "rust"), True)
    assert entry["params_schema"]["examples"][0]["language"] == "cpp"


def test_batch_over_http(http: httpx.Client) -> None:
    items = [
        {"response": "```cpp\nint main() { return 0; }\n```", "verifier": "compile", "params": {"language": "cpp"}},
        {"response": "int main( {", "verifier": "compile", "params": {"language": "c"}},
        {"response": "#include </dev/zero>", "verifier": "compile", "params": {"language": "cpp", "timeout_s": 5}},
        {
            "response": "int main(void) { int x; return 0; }",
            "verifier": "compile",
            "params": {"language": "c", "flags": ["-Wall"], "reward": "warnings_penalty", "warning_penalty": 0.5},
        },
        {"response": "print(1)", "verifier": "compile", "params": {"language": "python"}},
    ]
    r = http.post("/v1/grade", json={"items": items})
    assert r.status_code == 200, r.text
    got = [(res["reward"], res["verdict"], res["mask"]) for res in r.json()["results"]]
    assert got[0] == (1.0, "correct", False)
    assert got[1] == (0.0, "incorrect", False)
    assert got[2][0] == 0.0 and got[2][1] in ("incorrect", "timeout") and not got[2][2]
    assert got[3] == (0.5, "partial", False)
    assert got[4] == (1.0, "correct", False)


def test_disallowed_flag_is_masked_naming_it(http: httpx.Client) -> None:
    item = {"response": "int main() {}", "verifier": "compile", "params": {"language": "cpp", "flags": ["-o", "x"]}}
    result = http.post("/v1/grade", json={"items": [item]}).json()["results"][0]
    assert (result["verdict"], result["mask"]) == ("error", True)
    assert "flags[0]" in result["reason"] and "'-o'" in result["reason"]
    r = http.post("/v1/grade", json={"items": [item], "strict": True})
    assert r.status_code == 422 and "'-o'" in r.text and "items[0]" in r.text
    r = http.post("/v1/grade", json={"items": [{**item, "params": {"language": "fortran"}}], "strict": True})
    assert r.status_code == 422 and "fortran" in r.text
