"""The static half of the determinism check: the module's syntax tree, read on the host, never run.

An admitted environment is a function of (seed, actions). The sandbox makes some sources of
non-determinism deterministic by construction (the module-level `random`, string hashing and
set order, a fresh instance per reset); the ones it cannot pin are refused here with the line
and the fix: clocks, system entropy, `id()`, the process id, and state kept on the class.
docs/environments.md has the table; `determinism_findings` returns (refusals, warnings).
The dynamic check in the sandbox is the proof for what no reading of the source can see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from duels.engine.validation_transcript import parse_source

CLOCK_FIX = "count steps instead (self.turn += 1 in step)"
ENTROPY_FIX = "draw from rng = random.Random(seed) made in reset"
CLOCKS = {f"time.{name}" for name in (
    "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
    "process_time", "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime",
    "clock_gettime_ns")} | {"datetime.datetime.now", "datetime.datetime.utcnow",
                            "datetime.datetime.today", "datetime.date.today"}
# These read the clock only when called without the time they should format.
CLOCK_WITHOUT_ARGUMENT = {"time.localtime": 0, "time.gmtime": 0, "time.ctime": 0,
                          "time.asctime": 0, "time.strftime": 1}
ENTROPY = {
    "os.urandom": f"{ENTROPY_FIX} (rng.randbytes(n))",
    "os.getrandom": f"{ENTROPY_FIX} (rng.randbytes(n))",
    "random.SystemRandom": f"{ENTROPY_FIX}; SystemRandom ignores any seed",
    "uuid.uuid1": "use uuid.UUID(int=rng.getrandbits(128), version=4) with rng = "
                  "random.Random(seed) made in reset",
    "uuid.uuid4": "use uuid.UUID(int=rng.getrandbits(128), version=4) with rng = "
                  "random.Random(seed) made in reset",
}
MODULE_RANDOM_DRAWS = {f"random.{name}" for name in (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "gauss", "normalvariate", "triangular", "betavariate", "expovariate", "getrandbits",
    "randbytes", "lognormvariate", "vonmisesvariate", "gammavariate", "paretovariate",
    "weibullvariate", "binomialvariate")}
MUTABLE_FACTORIES = {"list", "dict", "set", "bytearray", "collections.defaultdict",
                     "collections.Counter", "collections.deque", "collections.OrderedDict"}
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "add",
                    "discard", "setdefault", "popitem", "sort", "reverse", "appendleft",
                    "extendleft", "popleft", "rotate", "__setitem__", "__delitem__"}


@dataclass
class Findings:
    refusals: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)

    def refuse(self, node: ast.AST, text: str) -> None:
        self.refusals.append((node.lineno, f"line {node.lineno}: {text}"))

    def warn(self, node: ast.AST, text: str) -> None:
        self.warnings.append((node.lineno, f"line {node.lineno}: {text}"))


def determinism_findings(source: str) -> tuple[list[str], list[str]]:
    """(refusals, warnings) for `source`, each naming its line; ([], []) when it does not parse
    (module_loads then says why)."""
    tree = parse_source(source)
    if tree is None:
        return [], []
    names = imported_names(tree)
    bound = {node.id for node in ast.walk(tree)
             if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    bound |= {node.name for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    for builtin in ("id", "hash"):
        if builtin not in bound and builtin not in names:
            names[builtin] = f"builtins.{builtin}"
    findings = Findings()
    calls_check(tree, names, findings)
    references_check(tree, names, findings)
    import_time_draws_check(tree, names, findings)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            class_state_check(node, findings)
    refusals = [text for _line, text in sorted(findings.refusals)]
    warnings = [text for _line, text in sorted(findings.warnings)]
    return refusals, warnings


def imported_names(tree: ast.Module) -> dict[str, str]:
    """Each name an import binds, mapped to what it stands for: `rnd` -> `random`,
    `now`-style from-imports -> `datetime.datetime`."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def dotted(node: ast.AST, names: dict[str, str]) -> str:
    """The qualified name an expression like `dt.datetime.now` stands for, or ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in names:
        return ""
    return ".".join([names[node.id], *reversed(parts)])


def calls_check(tree: ast.Module, names: dict[str, str], findings: Findings) -> None:
    reset = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                  and node.name == "reset"), None)
    in_reset = {id(node) for node in ast.walk(reset)} if reset is not None else set()
    # reset calling random.seed(seed) itself: the module-level draws are seeded anywhere.
    reset_seeds_random = reset is not None and any(
        isinstance(node, ast.Call) and dotted(node.func, names) == "random.seed" and node.args
        and not isinstance(node.args[0], ast.Constant) for node in ast.walk(reset))
    warned_draw = False
    module_level = {id(node) for statement in tree.body
                    if not isinstance(statement, ast.ClassDef | ast.FunctionDef)
                    for node in ast.walk(statement)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func, names)
        shown = name.removeprefix("builtins.")
        arguments = len(node.args) + len(node.keywords)
        if name in CLOCKS or (name in CLOCK_WITHOUT_ARGUMENT
                              and arguments <= CLOCK_WITHOUT_ARGUMENT[name]):
            findings.refuse(node, f"{shown}() reads the clock, so the same seed and actions give "
                                  f"other answers at another time; {CLOCK_FIX}")
        elif name in ENTROPY or name.startswith("secrets."):
            fix = ENTROPY.get(name, ENTROPY_FIX)
            findings.refuse(node, f"{shown}() draws from the system's entropy, so the same seed "
                                  f"gives another puzzle each time; {fix}")
        elif name == "random.Random" and (not node.args or is_none(node.args[0])):
            findings.refuse(node, "random.Random() without a seed seeds itself from the system's "
                                  "entropy; use rng = random.Random(seed) in reset")
        elif name == "random.seed" and (not node.args or is_none(node.args[0])):
            findings.refuse(node, "random.seed() without a seed seeds the module-level random "
                                  "from the system's entropy; use random.seed(seed) in reset")
        elif name == "random.seed" and isinstance(node.args[0], ast.Constant):
            if id(node) in module_level:
                findings.warn(node, f"random.seed({node.args[0].value!r}) at module level is "
                                    "overridden: EnvDuels seeds the module-level random from "
                                    "the episode's seed before each reset")
            elif id(node) in in_reset:
                findings.warn(node, f"random.seed({node.args[0].value!r}) ignores the episode's "
                                    "seed, so every seed is the same puzzle; use "
                                    "random.seed(seed)")
        elif name in MODULE_RANDOM_DRAWS and not reset_seeds_random and not warned_draw \
                and id(node) not in module_level:  # at import: refused (import_time_draws)
            warned_draw = True
            findings.warn(node, f"{name} draws from the module-level random, which EnvDuels "
                                "seeds from the episode's seed before each reset; elsewhere it "
                                "is unseeded: use rng = random.Random(seed) in reset")
        elif name == "builtins.id":
            findings.refuse(node, "id() is a memory address, which differs between sandboxes; "
                                  "number the objects yourself (self.next_id += 1)")
        elif name in ("os.getpid", "os.getppid"):
            findings.refuse(node, f"{shown}() is the sandbox's process number, not part of the "
                                  "puzzle; derive the value from the seed")
        elif name == "builtins.hash":
            findings.warn(node, "hash() of a str is pinned in EnvDuels's sandbox "
                                "(PYTHONHASHSEED=0) but differs between Python processes "
                                "elsewhere; zlib.crc32(text.encode()) is stable everywhere")


def passed_on_fix(name: str) -> str:
    if name in CLOCKS or name in CLOCK_WITHOUT_ARGUMENT:
        return f"reads the clock when it is called later; {CLOCK_FIX}"
    if name in ("os.getpid", "os.getppid"):
        return "is the sandbox's process number when it is called later; derive it from the seed"
    if name == "builtins.id":
        return "gives memory addresses, which differ between sandboxes; number the objects yourself"
    return f"draws from the system's entropy when it is called later; {ENTROPY_FIX}"


def references_check(tree: ast.Module, names: dict[str, str], findings: Findings) -> None:
    """Refuse a clock, entropy, process-id or id() function passed on as a value and called
    later: a dataclass `default_factory`, a default argument, `functools.partial`, an alias
    (`now = time.time`), a callback. It reads what a direct call reads."""
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name | ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        if id(node) in called or id(node) in inner:
            continue
        name = dotted(node, names)
        if not (name in CLOCKS or name in CLOCK_WITHOUT_ARGUMENT or name in ENTROPY
                or name.startswith("secrets.") or name in ("os.getpid", "os.getppid")
                or (name == "builtins.id" and isinstance(node, ast.Name))):
            continue
        shown = name.removeprefix("builtins.")
        findings.refuse(node, f"{shown} is passed on as a value (a default_factory, a default "
                              f"argument, functools.partial or an alias) and {passed_on_fix(name)}")


def import_time_draws_check(tree: ast.Module, names: dict[str, str], findings: Findings) -> None:
    """Refuse draws from the module-level random that run while the module is imported (at
    module level, in a class body, in a default argument or a decorator): they happen once,
    before any episode's seed, so every seed shares them."""
    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = node.args
            evaluated = [*arguments.defaults, *(d for d in arguments.kw_defaults if d)]
            if not isinstance(node, ast.Lambda):
                evaluated += node.decorator_list
            for child in evaluated:
                visit(child)
            return  # the body runs when called, after the seed
        if isinstance(node, ast.Call) and dotted(node.func, names) in MODULE_RANDOM_DRAWS:
            findings.refuse(node, f"{dotted(node.func, names)}() runs while the module is "
                                  "imported, before any episode's seed, so every seed gets the "
                                  "same draw; draw in reset from rng = random.Random(seed)")
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in tree.body:
        visit(statement)


def is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def class_state_check(cls: ast.ClassDef, findings: Findings) -> None:
    """Refuse state kept on the class and changed by its methods: it outlives reset."""
    mutable: dict[str, int] = {}
    attributes: set[str] = set()
    for statement in cls.body:
        targets = (statement.targets if isinstance(statement, ast.Assign)
                   else [statement.target] if isinstance(statement, ast.AnnAssign)
                   and statement.value is not None else [])
        for target in targets:
            if isinstance(target, ast.Name):
                attributes.add(target.id)
                if is_mutable(statement.value):
                    mutable[target.id] = statement.lineno
    if not attributes:
        return
    methods = [node for node in cls.body if isinstance(node, ast.FunctionDef)]
    on_instance = {node.attr for method in methods if method.name in ("__init__", "reset")
                   for node in ast.walk(method) if isinstance(node, ast.Attribute)
                   and isinstance(node.ctx, ast.Store) and is_self(node.value)}
    for method in methods:
        for node in ast.walk(method):
            changed = class_attribute_changed(node, cls.name)
            if changed and changed in attributes:
                findings.refuse(node, f"{method.name}() changes {cls.name}.{changed}, which is "
                                      "kept on the class, so it outlives reset; keep it on the "
                                      f"instance: self.{changed} = ... in reset")
                continue
            mutated = instance_container_mutated(node)
            if mutated in mutable and mutated not in on_instance:
                findings.refuse(node, f"{method.name}() changes self.{mutated}, a container made "
                                      f"once on the class (line {mutable[mutated]}), so it "
                                      "outlives reset and is shared by every episode; make it in "
                                      f"reset: self.{mutated} = ...")


def is_mutable(value: ast.AST | None) -> bool:
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp
                  | ast.SetComp):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else (
            f"collections.{func.attr}" if isinstance(func, ast.Attribute) else "")
        return name in MUTABLE_FACTORIES or f"collections.{name}" in MUTABLE_FACTORIES
    return False


def is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def is_class_reference(node: ast.AST, class_name: str) -> bool:
    """`Environment`, `cls`, `type(self)` or `self.__class__`."""
    if isinstance(node, ast.Name):
        return node.id in (class_name, "cls")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
        return len(node.args) == 1 and is_self(node.args[0])
    return isinstance(node, ast.Attribute) and node.attr == "__class__" and is_self(node.value)


def class_attribute_changed(node: ast.AST, class_name: str) -> str:
    """The attribute a statement assigns on the class itself (`Environment.count += 1`), or ""."""
    targets = (node.targets if isinstance(node, ast.Assign)
               else [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else [])
    for target in targets:
        if isinstance(target, ast.Attribute) and is_class_reference(target.value, class_name):
            return target.attr
    return ""


def instance_container_mutated(node: ast.AST) -> str:
    """The `self.X` a statement or call changes in place (`self.X.append(...)`,
    `self.X[k] = v`, `self.X += [...]`, `rng.shuffle(self.X)`), or ""."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        if node.func.attr in MUTATING_METHODS and isinstance(owner, ast.Attribute) \
                and is_self(owner.value):
            return owner.attr
        if node.func.attr == "shuffle" and node.args and isinstance(node.args[0], ast.Attribute) \
                and is_self(node.args[0].value):
            return node.args[0].attr
    targets = (node.targets if isinstance(node, ast.Assign | ast.Delete)
               else [node.target] if isinstance(node, ast.AugAssign) else [])
    for target in targets:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) \
                and is_self(target.value.value):
            return target.value.attr
        if isinstance(node, ast.AugAssign) and isinstance(target, ast.Attribute) \
                and is_self(target.value):
            return target.attr
    return ""
