"""One client per rlvr URL for each process (and for each event loop, for the async
client), shared by the trainer integrations: a trainer calls its reward function from
many threads and many coroutines, and each client holds a pool of keep-alive
connections, or, in-process (url None), a pool of worker processes."""

from __future__ import annotations

import asyncio
import atexit
import threading

from rlvr.client import AsyncRewardClient, RewardClient

_lock = threading.Lock()
_sync: dict[str | None, RewardClient] = {}
_async: dict[tuple[str | None, asyncio.AbstractEventLoop], AsyncRewardClient] = {}


def shared_client(url: str | None) -> RewardClient:
    with _lock:
        client = _sync.get(url)
        if client is None:
            client = _sync[url] = RewardClient(url)
        return client


def shared_async_client(url: str | None) -> AsyncRewardClient:
    """The client for `url` on the running event loop (an httpx client is bound to the
    loop it first ran on)."""
    key = (url, asyncio.get_running_loop())
    with _lock:
        client = _async.get(key)
        if client is None:
            client = _async[key] = AsyncRewardClient(url)
        return client


@atexit.register
def _close() -> None:
    # In-process clients own worker processes: stop them before the interpreter goes.
    with _lock:
        clients = list(_sync.values())
        _sync.clear()
    for client in clients:
        client.close()
