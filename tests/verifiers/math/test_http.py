"""A mixed math batch through a real `rlvr serve`."""

from __future__ import annotations

import httpx

# (response, ground truth, expected verdict)
BATCH: list[tuple[str, object, str]] = [
    (r"The answer is $\boxed{\dfrac{1}{2}}$.", r"\frac{1}{2}", "correct"),
    (r"So $\boxed{0.5}$", r"\frac12", "correct"),
    (r"So $\boxed{0.33}$", r"\frac{1}{3}", "incorrect"),
    (r"$\boxed{1{,}000}$", 1000, "correct"),
    (r"$\boxed{12\text{ cm}}$.", "12", "correct"),
    (r"$\boxed{(x+1)^2}$", "x^2+2x+1", "correct"),
    (r"$\boxed{x < 3}$", r"(-\infty, 3)", "correct"),
    (r"$\boxed{3, -2}$", "-2, 3", "correct"),
    (r"$\boxed{\begin{bmatrix}1&2\\3&4\end{bmatrix}}$", r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", "correct"),
    (r"It is $\boxed{3}$ or $\boxed{4}$.", "4", "incorrect"),
    (r"$\boxed{3}$. Wait, that is wrong: $\boxed{4}$.", "4", "correct"),
    ("I could not finish.", "4", "no_answer"),
    (r"$\boxed{9^{9^{9^{9}}}}$", "3", "incorrect"),
    (r"Solution: ... so $\boxed{\text{(B)}}$", "B", "correct"),
    ("<answer>7</answer>", r"The total is $\boxed{7}$.", "correct"),
]


def test_mixed_math_batch(live_server: str) -> None:
    items = [
        {"prompt": f"p{i % 4}", "response": r, "verifier": "math", "ground_truth": g, "params": {}}
        for i, (r, g, _) in enumerate(BATCH)
    ]
    # The same responses again: graded once, the repeats served from the cache.
    items += items[:3]
    with httpx.Client(base_url=live_server, timeout=120) as client:
        resp = client.post("/v1/grade", json={"items": items})
    assert resp.status_code == 200, resp.text
    results = resp.json()["results"]
    assert len(results) == len(items)
    expected = [v for _, _, v in BATCH] + [v for _, _, v in BATCH[:3]]
    assert [r["verdict"] for r in results] == expected, [(r["verdict"], r["reason"]) for r in results]
    for r, want in zip(results, expected, strict=True):
        assert r["reward"] == (1.0 if want == "correct" else 0.0)
        assert r["mask"] is False
        assert "stage" in r["details"]


def test_unknown_param_masks_the_item_or_is_a_client_error_when_strict(live_server: str) -> None:
    item = {"prompt": "", "response": r"\boxed{1}", "verifier": "math", "ground_truth": "1", "params": {"nope": 1}}
    with httpx.Client(base_url=live_server, timeout=60) as client:
        resp = client.post("/v1/grade", json={"items": [item], "strict": True})
        assert 400 <= resp.status_code < 500, resp.text
        result = client.post("/v1/grade", json={"items": [item]}).json()["results"][0]
    assert (result["verdict"], result["mask"]) == ("error", True) and "params.nope" in result["reason"]
