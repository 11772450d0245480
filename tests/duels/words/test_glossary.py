"""The glossary is the one list of metric definitions; docs/results.md carries it."""

from __future__ import annotations

import re
from pathlib import Path

from duels.words.glossary import GLOSSARY, GLOSSARY_BY_KEY, glossary_term

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "docs" / "results.md"
# Pages whose own "Reading the results" section defines the metrics of their concern.
DOC_PAGES = (ROOT / "docs" / "flywheel.md",)


def _section(title: str, page: Path) -> str:
    text = page.read_text(encoding="utf-8") + "\n## end\n"
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"{page.name} has no section {title!r}"
    return " ".join(match.group(1).split())


def _definitions() -> str:
    text = RESULTS.read_text(encoding="utf-8")
    own = " ".join(text.split("\n## Where each figure is in the JSON")[0].split())
    return " ".join([own, *(_section("Reading the results", page) for page in DOC_PAGES)])


def _plain(text: str) -> str:
    return " ".join(text.split())


def test_every_glossary_entry_is_defined_in_docs_results():
    section = _definitions()
    missing = [term.key for term in GLOSSARY
               if f"**{term.label}** (`{term.key}`)" not in section
               or _plain(term.meaning) not in section
               or _plain(term.formula) not in section]
    assert missing == [], f"docs/results.md lacks or differs for: {missing}"


def test_entries_are_unique_complete_and_anchorable():
    assert len(GLOSSARY_BY_KEY) == len(GLOSSARY)
    for term in GLOSSARY:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", term.key), term.key
        assert term.label and term.formula
        assert term.meaning.endswith("."), term.key
    assert glossary_term(key="setter_score").formula.startswith("s = p_h · (1 − p_u)")


def test_the_issue_metrics_and_verdicts_are_all_defined():
    for key in ("p_unhinted", "p_hinted", "hint_gain", "setter_score", "flips", "outcome",
                "rating", "interval", "zeta", "transitive_share", "kendall_tau",
                "convergence_p", "transfer_rho", "scale_rho", "supported", "contradicted",
                "not_enough_data"):
        assert key in GLOSSARY_BY_KEY, key
