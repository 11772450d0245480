"""docs/security.md states every cap of imported files with the number the reader applies."""

from __future__ import annotations

import re
from pathlib import Path

from duels.exchange import untrusted
from duels.exchange.records import VALIDATION_REPORT_BYTES
from duels.panels.v1_read import MAX_ENVIRONMENTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"

EXPECTED = {
    "an environment's source": untrusted.SOURCE.limit,
    "an envduels-v1 class file": untrusted.CLASS_FILE.limit,
    "`metadata.json`": untrusted.DOCUMENT.limit,
    "`manifest.json`": untrusted.MANIFEST.limit,
    "versions in one manifest": MAX_ENVIRONMENTS,
    "everything one folder import reads": untrusted.IMPORT_BYTES,
    "an envduels.v1 exchange file": untrusted.EXCHANGE_FILE.limit,
    "one line of an exchange file": untrusted.EXCHANGE_LINE,
    "a transfer CSV": untrusted.CSV_FILE.limit,
    "an environment's validation report": VALIDATION_REPORT_BYTES,
}


def imported_files_table() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("### Imported files", 1)[1]
    rows = {}
    for line in section.split("\n\n", 3)[2].splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 2 and not set(cells[1]) <= {"-", " "} and cells[1] != "cap":
            rows[cells[0]] = cells[1]
    return rows


def stated_number(text: str) -> int:
    """The exact number a cap cell states: the one in parentheses, else the whole cell."""
    exact = re.search(r"\(([\d,]+) bytes\)", text)
    return int((exact.group(1) if exact else text.split()[0]).replace(",", ""))


def test_every_cap_of_imported_files_is_documented_with_its_number():
    table = imported_files_table()
    for start, number in EXPECTED.items():
        cells = [cap for content, cap in table.items() if content.startswith(start)]
        assert len(cells) == 1, (start, list(table))
        assert stated_number(cells[0]) == number, (start, cells[0], number)
    assert len(table) == len(EXPECTED)
