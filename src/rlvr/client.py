"""The client SDK: grade batches from a trainer and get rewards back.

Example (`rlvr_url` is the address of a running `rlvr serve`)::

    >>> from rlvr import RewardClient
    >>> with RewardClient(rlvr_url) as client:
    ...     rewards = client.rewards(
    ...         responses=["<think>2+2</think><answer>4</answer>", "4"],
    ...         verifier="format",
    ...     )
    >>> rewards.values, rewards.mask
    ([1.0, 0.0], [False, False])

Masked items (the grader failed) come back with `mask=True`; drop them from the loss
instead of treating their reward as 0.

Large batches are split into chunks of `chunk_size` items (the items of one `group`
stay in one chunk, so that the server's group statistics see the whole group), and at
most `concurrency` chunks are in flight at once. Results come back in request order.

Grading is idempotent, so the client retries what a retry can cure: connection errors,
429 and 5xx answers (a server draining for a restart answers 503), with exponential
backoff and jitter, or after the server's Retry-After, for as long as `retry_budget_s`
(120 s by default: a rolling restart, or a replica's restart, is over by then) from a
request's first try. A trainer step outlasts a restart instead of raising.

`url=None` grades in-process: the service runs in this process (its worker pool in child
processes), with no server to start. The seam is httpx's transport: `rlvr.in_process`
serves the same app through an in-process ASGI transport, so validation, errors and
retries are those of the HTTP service. It is the client's only way into the server's
layers, and is imported only when `url` is None (the import contracts in pyproject.toml
name that one import).

Sessions (`open_session`) are live Python interpreters for the tools a policy calls in a
rollout: each `run_in_session` call sees the variables, imports and /tmp files of the
earlier ones. A session that is gone raises `SessionNotFound`. Running code is not
idempotent: a call is retried only where it surely never ran (no connection, 429, 503).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, TypeVar, Unpack, cast

import httpx

from rlvr.results import GradeResult

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_RETRY_BUDGET_S = 120.0
DEFAULT_BACKOFF_S = 0.5
# Short enough that a restarted server is back in use within seconds of its return.
MAX_BACKOFF_S = 10.0
DEFAULT_CHUNK_SIZE = 1024
DEFAULT_CONCURRENCY = 8
RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})
# An item as the API's `GradeItem` JSON, and the request's `stats` as the API's
# `GradeStats` JSON: the client sends and returns them as they are (the server validates
# items, naming the field that is wrong; chunks' statistics are summed, `merge_stats`).
ItemJSON = dict[str, Any]
StatsJSON = dict[str, Any]

Advantage = Literal["grpo", "dr_grpo", "rloo"]
T = TypeVar("T")


class RewardServiceError(RuntimeError):
    """An error answer: its HTTP `status`, `message`, and the API's error `code` when it sent one."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(f"rlvr answered {status}: {message}")
        self.status = status
        self.message = message
        self.code = code


class SessionNotFound(RewardServiceError):
    """No live session has that id: it was ended, killed by a limit, reaped when idle, lost
    with its server, or never existed. Its variables and files are gone."""


# The error codes of a session that is gone: never there, ended under a call, or lost
# with the replica that held it.
SESSION_GONE_CODES = frozenset({"session_not_found", "session_ended", "session_lost"})
# Where a request that runs code surely never ran: no connection was made, or the server
# refused it up front (full, draining, past its connection limit).
UNSENT_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
UNRUN_STATUSES = frozenset({429, 503})


@dataclass
class Graded:
    """The results, in request order, and the request's statistics (summed over chunks):
    the API's `GradeStats` object as JSON, as a server sent it."""

    results: list[GradeResult]
    stats: StatsJSON


@dataclass
class Rewards:
    values: list[float]
    mask: list[bool]
    results: list[GradeResult]
    stats: StatsJSON

    @property
    def advantages(self) -> list[float | None]:
        return [r.advantage for r in self.results]


class SessionLimits(TypedDict, total=False):
    """A session's limits (`POST /v1/sessions`); the server's defaults where left out."""

    memory_mb: int  # all its processes together
    cpu_s: int  # CPU seconds for all its calls together
    call_cpu_s: float  # CPU seconds for one call
    idle_ttl_s: float  # ended after this long without a call


class RunResult(TypedDict):
    """One session call's outcome (`POST /v1/sessions/{id}/run`). `status`: ok; error (the
    code raised: `error`, `traceback`); timeout (interrupted, the session goes on); killed
    (the session ended, `limit` says why). `value` is the repr of the last expression."""

    status: Literal["ok", "error", "timeout", "killed"]
    stdout: str
    stderr: str
    value: str | None
    error: str | None
    traceback: str | None
    limit: str | None
    execution_time: float
    stdout_bytes: int
    stderr_bytes: int


class ClientOptions(TypedDict, total=False):
    timeout_s: float
    retry_budget_s: float
    backoff_s: float
    chunk_size: int
    concurrency: int
    transport: httpx.AsyncBaseTransport | None


class AsyncRewardClient:
    """The client for asyncio code. `url=None` grades in-process (see the module's notes);
    `transport` replaces the HTTP transport (an `httpx.AsyncBaseTransport`)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_budget_s: float = DEFAULT_RETRY_BUDGET_S,
        backoff_s: float = DEFAULT_BACKOFF_S,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        concurrency: int = DEFAULT_CONCURRENCY,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if chunk_size < 1 or concurrency < 1 or retry_budget_s < 0:
            raise ValueError("chunk_size and concurrency must be at least 1, retry_budget_s at least 0")
        if url is None and transport is None:
            from rlvr.in_process import InProcessTransport

            transport = InProcessTransport()
        # Keep-alive connections for every chunk in flight: single-item callers (verl's
        # reward loop) send many small requests at once.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(concurrency, 64))
        self.http = httpx.AsyncClient(
            base_url=url or "http://rlvr.in-process", timeout=timeout_s, transport=transport, limits=limits
        )
        self.retry_budget_s = retry_budget_s
        self.backoff_s = backoff_s
        self.chunk_size = chunk_size
        self.concurrency = concurrency
        self._vocabularies: dict[str, list[str]] | None = None
        # One `GET /v1/verifiers` for the callers that ask before it has answered.
        self._vocabularies_lock = asyncio.Lock()

    async def __aenter__(self) -> AsyncRewardClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def grade(
        self,
        items: Sequence[ItemJSON],
        *,
        deadline_s: float | None = None,
        advantage: Advantage | None = None,
        strict: bool = False,
    ) -> Graded:
        """Results in request order. RewardServiceError for an error answer that retries did
        not cure, or the transport's error (httpx.TransportError) when no answer came. An
        item whose params or ground truth its verifier refuses comes back masked, naming
        the fields; with `strict`, the request fails instead (422)."""
        if not items:
            return Graded([], {"items": 0})
        extra: dict[str, Any] = {"strict": True} if strict else {}
        if deadline_s is not None:
            extra["deadline_s"] = deadline_s
        if advantage is not None:
            extra["advantage"] = advantage
        chunks = chunk_indices(items, self.chunk_size)
        gate = asyncio.Semaphore(self.concurrency)
        failed = asyncio.Event()

        async def send(chunk: list[int]) -> dict[str, Any]:
            async with gate:
                if failed.is_set():  # a chunk failed, so the call does: send no more
                    raise asyncio.CancelledError
                try:
                    return await self._post("/v1/grade", {"items": [items[i] for i in chunk], **extra}, len(chunk))
                except BaseException:
                    failed.set()
                    raise

        tasks = [asyncio.ensure_future(send(c)) for c in chunks]
        try:
            answers = await asyncio.gather(*tasks)
        finally:
            for task in tasks:  # on failure or cancellation, the chunks in flight are moot
                task.cancel()
        results: list[GradeResult | None] = [None] * len(items)
        for chunk, answer in zip(chunks, answers, strict=True):
            for i, data in zip(chunk, answer["results"], strict=True):
                results[i] = GradeResult.model_validate(data)
        return Graded([r for r in results if r is not None], merge_stats([a["stats"] for a in answers]))

    async def rewards(
        self,
        responses: Sequence[str],
        verifier: str | list[dict[str, Any]],
        ground_truths: Sequence[Any] | None = None,
        prompts: Sequence[str] | None = None,
        params: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
        advantage: Advantage | None = None,
    ) -> Rewards:
        items = build_items(responses, verifier, ground_truths, prompts, params, groups)
        out = await self.grade(items, advantage=advantage)
        return Rewards([r.reward for r in out.results], [r.mask for r in out.results], out.results, out.stats)

    async def validate(self, items: Sequence[ItemJSON]) -> list[dict[str, Any]]:
        """The items `grade` would mask as invalid, without grading: `/v1/validate`'s
        `invalid` entries, each `index` a place in `items`. RewardServiceError when the
        request itself is at fault (an unknown verifier)."""
        invalid: list[dict[str, Any]] = []
        for chunk in chunk_indices(items, self.chunk_size):
            answer = await self._post("/v1/validate", {"items": [items[i] for i in chunk]}, None)
            for entry in answer["invalid"]:
                invalid.append({**entry, "index": chunk[entry["index"]]})
        return invalid

    async def signal_names(self, verifier: str | None = None) -> list[str]:
        """The signals `verifier` may report (every verifier's, when None), sorted: the
        names a trainer logs for every item and step, so that its keys stay the same
        whichever signals a batch raised. Read once from `GET /v1/verifiers`."""
        vocabularies = await self._vocabularies_read()
        if verifier is not None:
            return list(vocabularies.get(verifier, ()))
        return sorted({name for names in vocabularies.values() for name in names})

    async def _vocabularies_read(self) -> dict[str, list[str]]:
        async with self._vocabularies_lock:
            if self._vocabularies is None:
                try:
                    answer = await self._request("GET", "/v1/verifiers", None, None)
                except RewardServiceError:
                    # A server that answers with an error here (an older or another service)
                    # has no signals to name: the trainer's logs go without them, not its run.
                    answer = {"verifiers": []}
                self._vocabularies = {
                    str(v["name"]): sorted(str(s["name"]) for s in v.get("signals", ())) for v in answer["verifiers"]
                }
            return self._vocabularies

    async def open_session(self, tag: str = "", **limits: Unpack[SessionLimits]) -> str:
        """A new session's id. `tag` is free text (a batch and trajectory id) for
        `end_sessions`. A full server (429) is waited for, within `retry_budget_s`."""
        answer = await self._request("POST", "/v1/sessions", {"language": "python", "tag": tag, **limits}, None)
        return str(answer["id"])

    async def run_in_session(self, session_id: str, code: str, stdin: str = "", timeout_s: float = 30.0) -> RunResult:
        """Runs `code` in the session; past `timeout_s` the call is interrupted (status
        timeout) and the session goes on. SessionNotFound when it is gone; a
        RewardServiceError with status 409 while it is still running an earlier call."""
        body = {"code": code, "stdin": stdin, "timeout_s": timeout_s}
        answer = await self._request("POST", f"/v1/sessions/{session_id}/run", body, None, idempotent=False)
        return cast(RunResult, answer)

    async def end_session(self, session_id: str) -> None:
        """Ends the session and every process it started; SessionNotFound when it is gone."""
        await self._request("DELETE", f"/v1/sessions/{session_id}", None, None)

    async def end_sessions(self, prefix: str) -> int:
        """Ends every session whose tag starts with `prefix` (not empty); how many."""
        answer = await self._request("DELETE", "/v1/sessions", None, None, params={"prefix": prefix})
        return int(answer["ended"])

    async def _post(self, path: str, body: dict[str, Any], expected: int | None) -> dict[str, Any]:
        return await self._request("POST", path, body, expected)

    async def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        expected: int | None,
        *,
        params: dict[str, str] | None = None,
        idempotent: bool = True,
    ) -> dict[str, Any]:
        """The answer to `body`, which must hold `expected` results (None: no results);
        retried until `retry_budget_s` from the first try is spent. A request that is not
        `idempotent` is retried only where it surely never ran (UNSENT_ERRORS, UNRUN_STATUSES)."""
        give_up_at = time.monotonic() + self.retry_budget_s
        retried = RETRIED_STATUSES if idempotent else UNRUN_STATUSES
        attempt = 0
        while True:
            try:
                r = await self.http.request(method, path, json=body, params=params)
            except httpx.TransportError as exc:
                unsent = idempotent or isinstance(exc, UNSENT_ERRORS)
                if not unsent or not await self._waited(attempt, None, give_up_at):
                    raise
                attempt += 1
                continue
            retry_after = r.headers.get("retry-after")
            if r.status_code in retried and await self._waited(attempt, retry_after, give_up_at):
                attempt += 1
                continue
            if not r.is_success:
                raise _service_error(r)
            if r.status_code == 204:
                return {}
            answer: dict[str, Any] = r.json()
            if expected is not None and len(answer.get("results", ())) != expected:
                raise RewardServiceError(200, f"{len(answer.get('results', ()))} results for {expected} items")
            return answer

    async def _waited(self, attempt: int, retry_after: str | None, give_up_at: float) -> bool:
        """Sleeps before the next try; False, without sleeping, when it would end past the budget."""
        delay = self._backoff(attempt, retry_after)
        if time.monotonic() + delay > give_up_at:
            return False
        await asyncio.sleep(delay)
        return True

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                pass  # an HTTP date: fall back to our own schedule
        # Full jitter, so that the clients of a restarted server do not all come back at once.
        return random.uniform(0.0, min(MAX_BACKOFF_S, self.backoff_s * 2 ** min(attempt, 32)))


class RewardClient:
    """The blocking client: an AsyncRewardClient on a private event loop thread, so that it
    works the same from plain code and from code already inside an event loop."""

    def __init__(self, url: str | None = None, **options: Unpack[ClientOptions]) -> None:
        """`options` are AsyncRewardClient's."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rlvr-client", daemon=True)
        self._thread.start()
        self.aio = AsyncRewardClient(url, **options)

    def __enter__(self) -> RewardClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self.aio.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def grade(
        self,
        items: Sequence[ItemJSON],
        *,
        deadline_s: float | None = None,
        advantage: Advantage | None = None,
        strict: bool = False,
    ) -> Graded:
        return self._run(self.aio.grade(items, deadline_s=deadline_s, advantage=advantage, strict=strict))

    def validate(self, items: Sequence[ItemJSON]) -> list[dict[str, Any]]:
        return self._run(self.aio.validate(items))

    def signal_names(self, verifier: str | None = None) -> list[str]:
        return self._run(self.aio.signal_names(verifier))

    def rewards(
        self,
        responses: Sequence[str],
        verifier: str | list[dict[str, Any]],
        ground_truths: Sequence[Any] | None = None,
        prompts: Sequence[str] | None = None,
        params: dict[str, Any] | None = None,
        groups: Sequence[str] | None = None,
        advantage: Advantage | None = None,
    ) -> Rewards:
        return self._run(self.aio.rewards(responses, verifier, ground_truths, prompts, params, groups, advantage))

    def open_session(self, tag: str = "", **limits: Unpack[SessionLimits]) -> str:
        return self._run(self.aio.open_session(tag, **limits))

    def run_in_session(self, session_id: str, code: str, stdin: str = "", timeout_s: float = 30.0) -> RunResult:
        return self._run(self.aio.run_in_session(session_id, code, stdin, timeout_s))

    def end_session(self, session_id: str) -> None:
        self._run(self.aio.end_session(session_id))

    def end_sessions(self, prefix: str) -> int:
        return self._run(self.aio.end_sessions(prefix))

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()


def build_items(
    responses: Sequence[str],
    verifier: str | list[dict[str, Any]],
    ground_truths: Sequence[Any] | None = None,
    prompts: Sequence[str] | None = None,
    params: dict[str, Any] | None = None,
    groups: Sequence[str] | None = None,
) -> list[ItemJSON]:
    """/v1/grade items; the sequences given must be as long as `responses`."""
    for name, seq in (("ground_truths", ground_truths), ("prompts", prompts), ("groups", groups)):
        if seq is not None and len(seq) != len(responses):
            raise ValueError(f"{name}: {len(seq)} values for {len(responses)} responses")
    items = []
    for i, response in enumerate(responses):
        item: ItemJSON = {"response": response, "verifier": verifier}
        if ground_truths is not None:
            item["ground_truth"] = ground_truths[i]
        if prompts is not None:
            item["prompt"] = prompts[i]
        if params and isinstance(verifier, str):
            item["params"] = params
        if groups is not None:
            item["group"] = groups[i]
        items.append(item)
    return items


def chunk_indices(items: Sequence[ItemJSON], chunk_size: int) -> list[list[int]]:
    """Item indices in chunks of at most `chunk_size`, except that the items of one group
    are never split (a larger group is a chunk of its own)."""
    blocks: dict[object, list[int]] = {}
    for i, item in enumerate(items):
        group = item.get("group")
        blocks.setdefault(i if group is None else ("group", group), []).append(i)
    chunks: list[list[int]] = []
    current: list[int] = []
    for block in blocks.values():
        if current and len(current) + len(block) > chunk_size:
            chunks.append(current)
            current = []
        current.extend(block)
    if current:
        chunks.append(current)
    return chunks


def merge_stats(parts: list[StatsJSON]) -> StatsJSON:
    """One request's statistics from its chunks': counts add up, the wall time is the
    longest chunk's, and groups (never split across chunks) are joined."""
    if len(parts) == 1:
        return parts[0]
    out: StatsJSON = {}
    for part in parts:
        for key, value in part.items():
            if key == "elapsed_ms":
                out[key] = max(out.get(key, 0.0), value)
            elif isinstance(value, dict):
                merged = out.setdefault(key, {})
                for k, v in value.items():
                    merged[k] = merged.get(k, 0) + v if isinstance(v, int | float) and key != "groups" else v
            elif isinstance(value, int | float):
                out[key] = out.get(key, 0) + value
            else:
                out[key] = value
    return out


def _service_error(r: httpx.Response) -> RewardServiceError:
    """The error an answer carries: SessionNotFound for a session that is gone."""
    try:
        error = r.json()["error"]
        message, code = str(error["message"]), error.get("code")
    except (ValueError, KeyError, TypeError, AttributeError):
        message, code = r.text[:500], None
    code = code if isinstance(code, str) else None
    kind = SessionNotFound if code in SESSION_GONE_CODES else RewardServiceError
    return kind(r.status_code, message, code)
