"""Validation benchmark: what validation admits from the project's corpus, and what it costs.

    python benchmarks/validation_bench.py [--code TREE] [--backend NAME] [--repeat 3]

Reads every setter answer of tests/duels/players/corpus/setter (and the built-in players'
environments, one per family at the middle difficulty), validates each in real sandboxes and
prints one line per environment (admitted or refused, and the first failed check), the totals,
and the wall time of validating a typical environment (the corpus's claude_plain.md; best of
`--repeat`), also as a ratio to starting one sandbox, loading it and resetting it once (the
floor: validation needs two sandboxes). It also reads every reply of
tests/duels/players/corpus/solver and counts those read as expected.json says.

`--code TREE` imports EnvDuels from another checkout of the project (for example an older
commit unpacked with `git archive`), so the same corpus can be measured against two versions of
the code in one sitting.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CORPUS = HERE / "tests" / "duels" / "players" / "corpus"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=HERE, help="the project tree to import")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    sys.path.insert(0, str(options.code.resolve()))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    import django

    django.setup()
    from duels.engine.validation import environment_validation_report
    from duels.players import prompts
    from duels.players.actions import action_from_text
    from duels.players.scripted import FAMILIES
    from sandbox_runner import open_sandbox

    print(f"code: {options.code.resolve()}  backend: {options.backend}")
    admitted = refused = unreadable = 0
    for path in sorted((CORPUS / "setter").glob("*.md")):
        try:
            answer = prompts.parse_setter_answer(path.read_bytes().decode("utf-8"))
        except prompts.SetterFormatError as error:
            unreadable += 1
            print(f"  unreadable  {path.name}: {str(error).splitlines()[0][:90]}")
            continue
        report = environment_validation_report(source=answer.source, hint_texts=[answer.hint],
                                               backend=options.backend)
        failed = [check for check in report["checks"] if not check["passed"]]
        if report["valid"]:
            admitted += 1
            print(f"  admitted    {path.name}")
        else:
            refused += 1
            print(f"  refused     {path.name}: {failed[0]['name']}: {failed[0]['detail'][:90]}")
    builtin_valid = 0
    for family in sorted(FAMILIES):
        env = FAMILIES[family].generate(difficulty=3, rng=random.Random(f"{family}:3:0"))
        report = environment_validation_report(source=env.source, hint_texts=[env.hint],
                                               backend=options.backend)
        builtin_valid += bool(report["valid"])
    expected = json.loads((CORPUS / "solver" / "expected.json").read_text())
    read_right = 0
    for name, want in expected.items():
        parsed = action_from_text((CORPUS / "solver" / name).read_bytes().decode())
        read_right += (bool(parsed.format_error) and not parsed.action
                       if want.get("format_error") else parsed.action == want["action"])
    typical = prompts.parse_setter_answer((CORPUS / "setter" / "claude_plain.md").read_text())
    times, floors = [], []
    for _ in range(options.repeat):
        started = time.perf_counter()
        environment_validation_report(source=typical.source, hint_texts=[typical.hint],
                                      backend=options.backend)
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        with open_sandbox(typical.source, backend=options.backend) as sandbox:
            sandbox.reset(seed=0)
        floors.append(time.perf_counter() - started)
    print(f"setter corpus: {admitted} admitted, {refused} refused, {unreadable} unreadable")
    print(f"built-in environments valid: {builtin_valid} of {len(FAMILIES)}")
    print(f"solver corpus read as expected: {read_right} of {len(expected)}")
    print(f"validating claude_plain.md: best {min(times):.2f} s of {options.repeat} "
          f"(all: {', '.join(f'{t:.2f}' for t in times)}); one sandbox started, loaded and "
          f"reset: best {min(floors):.3f} s; ratio {min(times) / min(floors):.1f}x")


if __name__ == "__main__":
    main()
