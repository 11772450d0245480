"""How a hint gain is written, wherever a person reads one (pages, charts, command output, a
package's README). One function, so every place agrees.

A hint gain is the difference of two pass rates (hinted − unhinted), so it is written in
**percentage points**, signed and whole: `+12 pp`, `0 pp`, `−25 pp`; an interval reads
`[−10, +40] pp`. Machine-readable outputs (JSON, CSV, the exchange file) keep the fraction
(0.12), as docs/json-outputs.md states.
"""

from __future__ import annotations

MINUS = "\u2212"
UNKNOWN = "—"


def _points(value: float) -> str:
    """Whole percentage points, halves away from zero (12.5 -> 13), with the sign."""
    size = int(abs(float(value)) * 100 + 0.5 + 1e-9)
    if size == 0:
        return "0"
    return f"+{size}" if value > 0 else f"{MINUS}{size}"


def hint_gain_text(value: float | None) -> str:
    """0.125 -> "+13 pp"; -0.25 -> "−25 pp"; None -> "—"."""
    if value is None or value == "":
        return UNKNOWN
    return f"{_points(value)} pp"


def hint_gain_interval_text(low: float | None, high: float | None) -> str:
    """A 95% interval of a hint gain: "[−10, +40] pp" ("" when either end is unknown)."""
    if low is None or high is None or low == "" or high == "":
        return ""
    return f"[{_points(low)}, {_points(high)}] pp"
