"""The test order for parallel runs: the same tests, each worker's slice opening with long ones."""

from __future__ import annotations

from types import SimpleNamespace

from tests.scheduling import scheduled, slice_sizes


def items(*nodeids: str) -> list:
    return [SimpleNamespace(nodeid=nodeid) for nodeid in nodeids]


def slices(ordered: list, workers: int) -> list[list[str]]:
    out, start = [], 0
    for size in slice_sizes(len(ordered), workers):
        out.append([item.nodeid for item in ordered[start:start + size]])
        start += size
    return out


def test_slice_sizes_are_the_ones_worksteal_sends():
    assert slice_sizes(10, 4) == [2, 2, 3, 3]
    assert sum(slice_sizes(1390, 4)) == 1390


def test_long_tests_open_the_slices_balanced_and_nothing_is_lost_or_repeated():
    quick = [f"tests/q/test_{index:02}.py::test" for index in range(20)]
    collected = items(*quick[:10], "tests/z/test_readme.py::test[a]", *quick[10:],
                      "tests/z/test_readme.py::test[b]", "tests/z/test_readme.py::test[c]")
    durations = {"tests/z/test_readme.py::test[a]": 300.0,
                 "tests/z/test_readme.py::test[b]": 200.0,
                 "tests/z/test_readme.py::test[c]": 120.0}
    ordered = scheduled(collected, 2, durations)
    assert sorted(item.nodeid for item in ordered) == sorted(item.nodeid for item in collected)
    first, second = slices(ordered, 2)
    assert first[0] == "tests/z/test_readme.py::test[a]"
    assert second[:2] == ["tests/z/test_readme.py::test[b]", "tests/z/test_readme.py::test[c]"]
    # The quick tests keep their file order, so module fixtures are still shared.
    rest = [nodeid for nodeid in first + second if nodeid in quick]
    assert rest == quick


def test_a_class_stays_together_and_without_durations_nothing_moves():
    collected = items("tests/a.py::test", "tests/b.py::Browser::test_1",
                      "tests/b.py::Browser::test_2", "tests/c.py::test")
    durations = {"tests/b.py::Browser::test_1": 10.0, "tests/b.py::Browser::test_2": 10.0}
    ordered = [item.nodeid for item in scheduled(collected, 2, durations)]
    assert ordered[:2] == ["tests/b.py::Browser::test_1", "tests/b.py::Browser::test_2"]
    assert scheduled(collected, 2, {}) == collected
    assert scheduled(collected, 1, durations) == collected
