"""Group commit: the judgments that arrive while one commit is on disk go in the next one.

The server answers a judgment only after it is committed (``synchronous=FULL``: one fsync per
commit). Committing each judgment on its own serialises the fsyncs on the event loop; instead
:class:`GroupCommit` queues the operations, and a single writer thread runs everything queued
in one transaction (:meth:`~.store.Store.run_batch`) while the event loop keeps serving: with
many assessors, one fsync covers many judgments. Each caller gets its own result (or its own
exception) after the commit that holds its operation.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


class GroupCommit:
    """Run store operations ``op(connection)`` in batches on one writer thread."""

    def __init__(self, store):
        self.store = store
        self.pending: list[tuple] = []
        self.flushing = False
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="irsample-writer")

    async def run(self, op):
        """The result of ``op`` once the transaction holding it is committed."""
        future = asyncio.get_running_loop().create_future()
        self.pending.append((op, future))
        if not self.flushing:
            self.flushing = True
            asyncio.get_running_loop().create_task(self._flush())
        result = await future
        if isinstance(result, Exception):
            raise result
        return result

    async def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                try:
                    results = await loop.run_in_executor(
                        self.thread, self.store.run_batch, [op for op, _ in batch])
                except Exception as exc:  # noqa: BLE001 - the whole transaction failed: every caller hears
                    results = [exc] * len(batch)
                for (_, future), result in zip(batch, results):
                    if not future.done():
                        future.set_result(result)
        finally:
            self.flushing = False

    async def idle(self) -> None:
        """Return once every operation queued so far is committed (nothing pending)."""
        while self.flushing or self.pending:
            await asyncio.sleep(0.005)

    def close(self) -> None:
        self.thread.shutdown(wait=True)
