"""One Judge shared by threads and by asyncio tasks, against a real fake server."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import List

import jevjudge

from conftest import SMS, FakeServer


def test_eight_threads_share_one_judge_and_review_in_parallel(fake_server: FakeServer) -> None:
    judge = jevjudge.Judge(
        jevjudge.Definition.load(SMS / "definition.toml"),
        base_url=fake_server.url,
        api_key_env="JEVJUDGE_TEST_KEY",
        budget=10.0,
    )
    results: List[List[jevjudge.Result]] = [[] for _ in range(8)]

    def work(slot: int) -> None:
        for k in range(10):
            results[slot].append(judge.review({"message": f"thread {slot} message {k}"}))

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(8)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    flat = [r for rs in results for r in rs]
    assert len(flat) == 80
    assert all(r.status != "ERROR" and r.backend == "fake" for r in flat), [r for r in flat if r.status == "ERROR"][:3]
    # The same state gets the same answer from any thread (the fake answers by hash).
    again = judge.review({"message": "thread 3 message 4"})
    assert again.findings == results[3][4].findings
    # 80 reviews of 20 ms each, one after another, take 1.6 s: the GIL was released while
    # each waited, so the threads overlapped.
    assert wall < 1.6, wall


def test_a_thousand_concurrent_review_async_calls(fake_server: FakeServer) -> None:
    judge = jevjudge.Judge(
        jevjudge.Definition.load(SMS / "definition.toml"),
        base_url=fake_server.url,
        api_key_env="JEVJUDGE_TEST_KEY",
        budget=30.0,
    )

    async def main() -> List[jevjudge.Result]:
        return await asyncio.gather(*(judge.review_async({"message": f"async {k}"}) for k in range(1000)))

    results = asyncio.run(main())
    assert len(results) == 1000
    assert all(isinstance(r, jevjudge.Result) for r in results)
    errors = [r for r in results if r.status == "ERROR"]
    assert not errors, errors[:3]
    assert {r.backend for r in results} == {"fake"}


def test_a_cancelled_review_async_task_is_dropped(fake_server: FakeServer) -> None:
    judge = jevjudge.Judge(
        jevjudge.Definition.load(SMS / "definition.toml"),
        base_url=fake_server.url,
        api_key_env="JEVJUDGE_TEST_KEY",
    )

    async def main() -> bool:
        task = asyncio.ensure_future(judge.review_async({"message": "cancelled"}))
        await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(main())
    # The Judge still reviews afterwards.
    assert judge.review({"message": "after"}).status != "ERROR"
