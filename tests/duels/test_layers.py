"""The import graph of `duels/` has layers that point one way.

Every `import` statement counts, wherever it stands: at the top of a module, inside a function
(a "lazy" import only delays the circle to the first call; the ten-file circle this test guards
against ran through such imports) and under `if TYPE_CHECKING:` (it still ties the two modules'
definitions together). Importing a package's module counts as importing that module, not the
package's `__init__.py` too (none of `duels/`'s package faces imports anything of its own).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "duels"


def module_names() -> dict[str, Path]:
    """Every module of `duels/` (migrations aside) by its dotted name."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.relative_to(PACKAGE).parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` refers to: itself, or the nearest enclosing known module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """module -> the `duels` modules it imports anywhere in its body."""
    modules = module_names()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(_known(alias.name, modules) for alias in node.names
                               if alias.name.split(".")[0] == "duels")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                if source.split(".")[0] != "duels":
                    continue
                for alias in node.names:
                    # `from duels.analytics import compute` imports the module `compute`.
                    submodule = f"{source}.{alias.name}"
                    targets.add(submodule if submodule in modules else _known(source, modules))
        graph[name] = {target for target in targets if target is not None and target != name}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each is an import circle)."""
    index: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def enter(module: str) -> tuple[str, object]:
        index[module] = lowest[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        return module, iter(sorted(graph.get(module, ())))

    for start in sorted(graph):
        if start in index:
            continue
        # Tarjan's algorithm, iterative: one (module, its imports not yet followed) frame each.
        frames = [enter(start)]
        while frames:
            module, pending = frames[-1]
            target = next(pending, None)
            if target is not None:
                if target not in index:
                    frames.append(enter(target))
                elif target in on_stack:
                    lowest[module] = min(lowest[module], index[target])
                continue
            frames.pop()
            if frames:
                parent = frames[-1][0]
                lowest[parent] = min(lowest[parent], lowest[module])
            if lowest[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def _describe(graph: dict[str, set[str]], circle: list[str]) -> str:
    members = set(circle)
    return "; ".join(f"{module} -> {', '.join(sorted(graph[module] & members))}"
                     for module in circle)


def _imports_into(graph: dict[str, set[str]], *, source: str, target: str) -> list[str]:
    return sorted(
        f"{module} -> {imported}" for module, imports in graph.items()
        if module == source or module.startswith(source + ".")
        for imported in imports if imported == target or imported.startswith(target + ".")
    )


def test_the_graph_counts_imports_made_inside_functions():
    # duels/tasks.py imports the engine and the analytics service only inside its tasks.
    graph = import_graph()
    assert "duels.engine.workers" in graph["duels.tasks"]
    assert "duels.services.analytics" in graph["duels.tasks"]


def test_the_circle_finder_finds_every_circle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(import_circles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert import_circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_circle_among_duels_modules():
    graph = import_graph()
    circles = import_circles(graph)
    assert circles == [], "import circles in duels/: " + " | ".join(
        _describe(graph, circle) for circle in circles)


def test_the_engine_never_imports_the_tasks_module():
    """Tasks call the engine; the engine enqueues through duels.engine.task_registry."""
    offending = _imports_into(import_graph(), source="duels.engine", target="duels.tasks")
    assert offending == [], f"the engine imports duels/tasks.py: {offending}"


def test_the_exchange_never_imports_the_engine():
    """An import never runs a duel: rescoring is duels.results.rescoring's, "data changed" a
    signal."""
    offending = _imports_into(import_graph(), source="duels.exchange", target="duels.engine")
    assert offending == [], f"duels/exchange/ imports duels/engine/: {offending}"


# Studies (duels/studies/) stand on the engine, the selectors, the analytics and the models;
# only panels (their rankings are the study's figures), the web, the commands and the tasks
# stand on them.
ABOVE_STUDIES = ("duels.studies", "duels.panels", "duels.forms.studies", "duels.views",
                 "duels.management", "duels.tasks", "duels.apps", "duels.urls", "duels.consumers",
                 "duels.routing", "duels.admin", "duels.templatetags")


def test_no_lower_layer_imports_the_studies_room():
    graph = import_graph()
    offending = sorted(
        f"{module} -> {imported}" for module, imports in graph.items()
        if not module.startswith(ABOVE_STUDIES)
        for imported in imports if imported.startswith("duels.studies"))
    assert offending == [], f"a lower layer imports duels/studies/: {offending}"


def test_the_studies_and_panels_rooms_never_import_the_web_commands_or_tasks():
    graph = import_graph()
    for room in ("duels.studies", "duels.panels"):
        for target in ("duels.views", "duels.management", "duels.tasks", "duels.consumers"):
            offending = _imports_into(graph, source=room, target=target)
            assert offending == [], f"{room} imports {target}: {offending}"


def test_the_studies_room_never_imports_the_panels_room():
    graph = import_graph()
    offending = _imports_into(graph, source="duels.studies", target="duels.panels")
    assert offending == [], f"duels/studies/ imports duels/panels/: {offending}"


def test_the_studys_figures_are_pure():
    """duels/studies/figures.py and the room's modules it imports use no Django and no
    database: the figures are a function of plain records."""
    graph = import_graph()
    modules = module_names()
    reached, pending = set(), ["duels.studies.figures"]
    while pending:
        module = pending.pop()
        if module in reached:
            continue
        reached.add(module)
        pending.extend(target for target in graph[module] if target.startswith("duels.studies"))
    for module in reached:
        assert not graph[module] & {name for name in modules if name.startswith((
            "duels.models", "duels.engine", "duels.selectors", "duels.services"))}, module
        tree = ast.parse(modules[module].read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names} | {node.module or "" for node in ast.walk(tree)
                                                if isinstance(node, ast.ImportFrom)}
        assert not {name for name in imported if name.split(".")[0] == "django"}, module
