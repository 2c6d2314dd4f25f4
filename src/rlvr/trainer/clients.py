"""One client per rlvr URL for each process (and for each event loop, for the async
client), shared by the trainer integrations: a trainer calls its reward function from
many threads and many coroutines, and each client holds a pool of keep-alive
connections, or, in-process (url None), a pool of worker processes."""

from __future__ import annotations

import asyncio
import atexit
import threading

from rlvr.client import DEFAULT_RETRY_BUDGET_S, AsyncRewardClient, RewardClient

_lock = threading.Lock()
_sync: dict[tuple[str | None, float], RewardClient] = {}
_async: dict[tuple[str | None, float, asyncio.AbstractEventLoop], AsyncRewardClient] = {}


def shared_client(url: str | None, retry_budget_s: float = DEFAULT_RETRY_BUDGET_S) -> RewardClient:
    """The client for `url` that retries for `retry_budget_s` (see `rlvr.client`)."""
    with _lock:
        client = _sync.get((url, retry_budget_s))
        if client is None:
            client = _sync[url, retry_budget_s] = RewardClient(url, retry_budget_s=retry_budget_s)
        return client


def shared_async_client(url: str | None, retry_budget_s: float = DEFAULT_RETRY_BUDGET_S) -> AsyncRewardClient:
    """The client for `url` on the running event loop (an httpx client is bound to the
    loop it first ran on)."""
    key = (url, retry_budget_s, asyncio.get_running_loop())
    with _lock:
        client = _async.get(key)
        if client is None:
            client = _async[key] = AsyncRewardClient(url, retry_budget_s=retry_budget_s)
        return client


@atexit.register
def _close() -> None:
    # In-process clients own worker processes: stop them before the interpreter goes.
    with _lock:
        clients = list(_sync.values())
        _sync.clear()
    for client in clients:
        client.close()
