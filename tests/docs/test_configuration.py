"""docs/configuration.md lists exactly the environment variables the code reads, with the
code's defaults: a new variable cannot go undocumented, a removed one cannot linger."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "configuration.md"
READERS = {"env_str", "env_bool", "env_int", "env_list", "env_redis_url", "env_networks"}
ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \|", re.M)


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def variables_read() -> dict[str, object]:
    """Every literal environment variable name the project code reads, with its default
    (a constant where the code gives one, else None)."""
    found: dict[str, object] = {}
    for folder in ("envduels_site", "duels", "sandbox_runner"):
        for path in (ROOT / folder).rglob("*.py"):
            if "guest" in path.parts:
                continue  # the program inside the sandbox sees a cleared environment
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Call) and node.args:
                    func, first = node.func, node.args[0]
                    reads = (isinstance(func, ast.Name) and func.id in READERS) or (
                        isinstance(func, ast.Attribute) and func.attr == "get"
                        and _is_environ(func.value))
                    if reads and isinstance(first, ast.Constant) and isinstance(first.value,
                                                                                str):
                        default = node.args[1] if len(node.args) > 1 else None
                        found[first.value] = (default.value if isinstance(default, ast.Constant)
                                              else None)
                elif (isinstance(node, ast.Subscript) and _is_environ(node.value)
                      and isinstance(node.slice, ast.Constant)):
                    found[node.slice.value] = None
    return found


def documented() -> dict[str, str]:
    return dict(ROW.findall(PAGE.read_text()))


def test_every_variable_the_code_reads_is_documented_and_nothing_else():
    read, listed = variables_read(), documented()
    assert "ENVDUELS_EPISODE_TIME_BUDGET_SECONDS" in read  # the reader sees multi-line calls
    assert sorted(set(read) - set(listed)) == [], "read by the code but not in the table"
    assert sorted(set(listed) - set(read)) == [], "in the table but never read"


def test_documented_defaults_are_the_code_defaults():
    read, listed = variables_read(), documented()
    wrong = {}
    for name, default in read.items():
        if isinstance(default, bool):
            shown = "1" if default else "0"
        elif isinstance(default, int):
            shown = str(default)
        elif isinstance(default, str) and default:
            shown = default
        else:
            continue
        if f"`{shown}`" not in listed[name]:
            wrong[name] = (shown, listed[name])
    assert wrong == {}, "documented default differs from the code's: {name: (code, docs)}"
