"""A forked child (a test's live server, a worker started by fork) does not inherit the parent's
supply of starting sandboxes, whose starting threads do not exist in the child."""

from __future__ import annotations

import os
from concurrent.futures import Future

from sandbox_runner import pool


def test_a_forked_child_starts_with_an_empty_supply():
    key = ("fork-test",)
    never_started: Future = Future()  # as a start still running in a parent's thread
    with pool.POOL.lock:
        supply = pool.POOL._new_supply(key)
        supply.ready.append(never_started)
    assert pool.POOL.ready_count() >= 1
    try:
        pid = os.fork()
        if pid == 0:  # the child: its own, empty supply and a lock nobody holds
            empty = pool.POOL.ready_count() == 0 and not pool.POOL.supplies
            os._exit(0 if empty and pool.POOL.lock.acquire(timeout=5) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert key in pool.POOL.supplies  # the parent's supply is untouched
    finally:
        with pool.POOL.lock:
            pool.POOL.supplies.pop(key, None)
