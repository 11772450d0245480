"""Longest tests first: an order that lets `pytest -n N --dist worksteal` finish sooner.

Worksteal hands worker i the i-th contiguous slice of the collected items and lets an idle
worker take the back half of the busiest worker's queue. In file order the longest tests (the
README's command blocks, the crash tests) sat at the back of the last slice, so they were stolen
last and ran alone at the end: the suite lasted as long as they did after everything else.

Here the items are ordered so each worker's slice starts with its share of the long units,
balanced by their recorded seconds (longest first onto the least loaded slice), and the quick
tests follow in file order, so module fixtures are still shared. A unit is a test class (its
browser and live server start once) or a module; a single item that takes long is a unit of its
own. What is stolen from the back of a queue is then quick tests.

Seconds come from tests/durations.json, written by `make test-durations` (`--store-durations`:
setup, call and teardown of every test that ran, merged into the file); a test it does not know
counts as quick.
The order changes no result, only when each test runs; a stale file only costs time.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

DURATIONS_FILE = Path(__file__).resolve().parent / "durations.json"
LONG_UNIT_SECONDS = 15.0  # a unit at least this long is placed by its time
LONG_ITEM_SECONDS = 30.0  # an item at least this long is placed on its own


def pytest_addoption(parser) -> None:
    parser.addoption("--store-durations", action="store_true",
                     help=f"write every test's seconds to {DURATIONS_FILE.name} for scheduling")


def load_durations(path: Path = DURATIONS_FILE) -> dict[str, float]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(key): float(value) for key, value in data.items()
            if isinstance(value, int | float)}


def slice_sizes(count: int, workers: int) -> list[int]:
    """How many items worksteal first sends each worker (xdist's WorkStealingScheduling)."""
    sizes, left = [], count
    for index in range(workers):
        size = left // (workers - index)
        sizes.append(size)
        left -= size
    return sizes


def unit_key(nodeid: str, seconds: float) -> str:
    if seconds >= LONG_ITEM_SECONDS:
        return nodeid
    parts = nodeid.split("::")
    in_class = len(parts) > 2
    return "::".join(parts[:2]) if in_class else parts[0]


def scheduled(items: list, workers: int, durations: dict[str, float]) -> list:
    """`items` reordered: worker i's slice opens with its long units, then quick tests."""
    if workers < 2 or not durations:
        return items
    units: dict[str, list] = defaultdict(list)
    for item in items:
        units[unit_key(item.nodeid, durations.get(item.nodeid, 0.0))].append(item)
    unit_seconds = {key: sum(durations.get(item.nodeid, 0.0) for item in members)
                    for key, members in units.items()}
    long_units = sorted((key for key in units if unit_seconds[key] >= LONG_UNIT_SECONDS),
                        key=lambda key: -unit_seconds[key])
    sizes = slice_sizes(len(items), workers)
    slices: list[list] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for key in long_units:
        fits = [index for index in range(workers)
                if len(slices[index]) + len(units[key]) <= sizes[index]]
        if not fits:
            continue
        target = min(fits, key=lambda index: loads[index])
        slices[target].extend(units[key])
        loads[target] += unit_seconds[key]
    placed = {id(item) for members in slices for item in members}
    quick = iter([item for item in items if id(item) not in placed])
    for index in range(workers):
        while len(slices[index]) < sizes[index]:
            slices[index].append(next(quick))
    return [item for members in slices for item in members]


def pytest_collection_modifyitems(config, items) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return  # one process, or xdist's controller: the workers' order is what counts
    items[:] = scheduled(items, int(workerinput["workercount"]), load_durations())


class DurationRecorder:
    """Adds up setup, call and teardown per test, as reports reach the controlling process."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report) -> None:
        self.seconds[report.nodeid] += report.duration

    def pytest_sessionfinish(self, session) -> None:
        if getattr(session.config, "workerinput", None) is not None:
            return  # each worker's reports also reach the controller, which writes the file
        # A partial run updates the tests it ran and keeps the others' seconds.
        merged = {**load_durations(), **self.seconds}
        rounded = {nodeid: round(value, 1) for nodeid, value in sorted(merged.items())}
        DURATIONS_FILE.write_text(json.dumps(rounded, indent=0, sort_keys=True) + "\n")


def pytest_configure(config) -> None:
    if config.getoption("--store-durations"):
        config.pluginmanager.register(DurationRecorder(), "envduels-durations")
