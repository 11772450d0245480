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


def module_names(planted: dict[str, Path] | None = None) -> dict[str, Path]:
    """Every module of `duels/` (migrations aside) by its dotted name, plus any `planted` ones
    (a test's temporary module standing in for a file under that name)."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.relative_to(PACKAGE).parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return {**names, **(planted or {})}


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module `name` refers to: itself, or the nearest enclosing known module."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(planted: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """module -> the `duels` modules it imports anywhere in its body."""
    modules = module_names(planted)
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


# The layers of duels/, lowest first (docs/architecture.md draws them). A module stands on the
# layer of the longest prefix naming it and may import its own layer and those below, never one
# above: a rule every room needs sits at the bottom, pure; the web, the commands and the tasks
# on top.
LADDER = (
    ("rules", ("duels.scoring", "duels.bounds", "duels.signals", "duels.annotation_defaults",
               "duels.words", "duels.analytics", "duels.players.keys")),
    ("models", ("duels.models",)),
    ("players", ("duels.players",)),
    ("results", ("duels.results",)),
    ("engine", ("duels.engine",)),
    ("selectors", ("duels.selectors",)),
    ("services", ("duels.services",)),
    ("local_models", ("duels.local_models",)),
    ("exchange", ("duels.exchange",)),
    ("trainers", ("duels.trainers",)),
    ("studies", ("duels.studies",)),
    ("panels", ("duels.panels",)),
    ("live", ("duels.live",)),
    # Publishing is a web capability: its writer renders the views' own pages into files, so it
    # stands beside the views it renders; nothing below the web imports it.
    ("web", ("duels.publishing", "duels.forms", "duels.templatetags", "duels.views",
             "duels.consumers", "duels.routing", "duels.urls", "duels.admin", "duels.management",
             "duels.tasks", "duels.apps")),
)

def layer_of(module: str) -> int:
    """The rung of `module` on LADDER (the longest prefix that names it wins)."""
    if module == "duels":
        return len(LADDER) - 1  # the package's face imports nothing
    best, rung = -1, None
    for position, (_, prefixes) in enumerate(LADDER):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rung = len(prefix), position
    assert rung is not None, f"{module} stands on no layer: add its room to LADDER"
    return rung


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{module} -> {imported}" for module, imports in graph.items()
                  for imported in imports if layer_of(imported) > layer_of(module))


def _prefixed(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def analytics_impurities(graph: dict[str, set[str]], modules: dict[str, Path]) -> list[str]:
    """duels/analytics/ modules that import Django or a duels module outside the rules layer."""
    found = []
    for module in sorted(name for name in graph if _prefixed(name, "duels.analytics")):
        found += [f"{module} -> {target}" for target in sorted(graph[module]) if layer_of(target)]
        tree = ast.parse(modules[module].read_text())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names} | {node.module or "" for node in ast.walk(tree)
                                                if isinstance(node, ast.ImportFrom)}
        found += [f"{module} -> {name}" for name in sorted(imported)
                  if name.split(".")[0] == "django"]
    return found


def sandbox_runner_reaches(files: list[Path]) -> list[str]:
    """Imports of the Django project from sandbox_runner/ (it runs with the stdlib and docker)."""
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.name} -> {name}" for name in names
                      if name.split(".")[0] in {"duels", "envduels_site"}]
    return found


RULES = {
    "no layer imports one above it": lambda graph, modules: upward_imports(graph),
    "selectors never import services": lambda graph, modules: _imports_into(
        graph, source="duels.selectors", target="duels.services"),
    "the exchange never imports views": lambda graph, modules: _imports_into(
        graph, source="duels.exchange", target="duels.views"),
    "studies never import panels": lambda graph, modules: _imports_into(
        graph, source="duels.studies", target="duels.panels"),
    "analytics stays pure": analytics_impurities,
}

# For each rule, a module planted under a name inside the rule's reach and the import breaking it.
PLANTS = {
    "no layer imports one above it": ("duels.engine.planted", "from duels.views import pages"),
    "selectors never import services": ("duels.selectors.planted",
                                        "from duels.services.players import player_create"),
    "the exchange never imports views": ("duels.exchange.planted", "import duels.views.pages"),
    "studies never import panels": ("duels.studies.planted", "from duels.panels import ranking"),
    "analytics stays pure": ("duels.analytics.planted", "from django.db import models"),
}


def test_every_layer_rule_holds():
    graph, modules = import_graph(), module_names()
    for rule, check in RULES.items():
        assert check(graph, modules) == [], f"{rule}: {check(graph, modules)}"


def test_the_sandbox_runner_knows_nothing_of_duels():
    files = sorted((ROOT / "sandbox_runner").rglob("*.py"))
    assert len(files) > 10
    assert sandbox_runner_reaches(files) == []


def test_each_rule_fails_on_a_planted_violation(tmp_path):
    assert set(PLANTS) == set(RULES)
    for rule, (name, line) in PLANTS.items():
        planted = tmp_path / f"{name.replace('.', '_')}.py"
        planted.write_text(f"from __future__ import annotations\n\n\ndef later():\n    {line}\n")
        graph = import_graph({name: planted})
        found = RULES[rule](graph, module_names({name: planted}))
        assert found and all(arrow.startswith(name) for arrow in found), (rule, found)


def test_the_sandbox_rule_fails_on_a_planted_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("from duels.models import Environment\n")
    assert sandbox_runner_reaches([planted]) == ["planted.py -> duels.models"]


def test_no_loose_modules_at_the_entrance():
    """duels/ holds its rooms, Django's entry modules and the rules every room shares."""
    entry = {"__init__.py", "apps.py", "admin.py", "urls.py", "routing.py", "consumers.py",
             "tasks.py", "signals.py"}
    # bounds (how much text is kept) and scoring serve every room; annotation_defaults is named
    # by migration 0017 and migrations never change.
    rules = {"scoring.py", "bounds.py", "annotation_defaults.py"}
    assert {path.name for path in PACKAGE.glob("*.py")} <= entry | rules


MAX_MODULE_LINES = 400
# The guest runs inside the sandbox from one file copied into the image, standard library only.
WHOLE_ON_PURPOSE = {"sandbox_runner/guest/envduels_guest.py"}


def test_no_module_over_400_lines():
    long = sorted(
        f"{path.relative_to(ROOT)} ({lines})"
        for folder in ("duels", "sandbox_runner", "envduels_site")
        for path in (ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts and str(path.relative_to(ROOT)) not in WHOLE_ON_PURPOSE
        and (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES)
    assert long == [], f"split by responsibility: {long}"
    assert all((ROOT / name).is_file() for name in WHOLE_ON_PURPOSE)
