"""ReplyStreamer: partial replies rung at most ~10 a second, the end of a burst not lost."""

from __future__ import annotations

import time

from duels.engine.partials import ReplyStreamer


def recorder():
    rung: list[tuple[float, str]] = []
    return rung, lambda **message: rung.append((time.monotonic(), message["text"]))


def test_a_burst_rings_once_then_its_last_text_after_the_interval():
    rung, ring = recorder()
    streamer = ReplyStreamer(episode_uuid="e", index=3, ring=ring, interval=0.2)
    for size in range(1, 51):  # fifty deltas at once
        streamer.update("x" * size, "")
    assert [text for _, text in rung] == ["x"]
    deadline = time.monotonic() + 10
    while len(rung) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [text for _, text in rung] == ["x", "x" * 50]  # the burst's last text followed
    assert rung[1][0] - rung[0][0] >= 0.19
    streamer.close()


def test_rings_stay_at_least_an_interval_apart():
    rung, ring = recorder()
    with ReplyStreamer(episode_uuid="e", index=1, ring=ring, interval=0.05) as streamer:
        deadline = time.monotonic() + 0.6
        size = 0
        while time.monotonic() < deadline:
            size += 1
            streamer.update("y" * size, "")
            time.sleep(0.002)
    gaps = [later - earlier for (earlier, _), (later, _) in zip(rung, rung[1:], strict=False)]
    assert len(rung) >= 5 and min(gaps) >= 0.045
    assert len(rung) <= 0.6 / 0.05 + 2


def test_a_restart_rings_at_once_and_close_drops_a_waiting_ring():
    rung, ring = recorder()
    streamer = ReplyStreamer(episode_uuid="e", index=2, ring=ring, interval=0.2)
    streamer.update("partial", "")
    streamer.update("", "")  # the stream broke off: viewers must clear now
    assert [text for _, text in rung] == ["partial", ""]
    streamer.update("again", "")  # waits for the interval...
    streamer.close()  # ...but the reply completed first
    time.sleep(0.35)
    assert [text for _, text in rung] == ["partial", ""]
    streamer.update("late", "")
    assert len(rung) == 2
