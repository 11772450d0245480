"""The source view escapes every token of an environment's (untrusted) source."""

from __future__ import annotations

from duels.selectors.source_view import source_highlighted_lines


def test_hostile_source_is_escaped_line_by_line():
    source = 'x = "<script>alert(1)</script>"\n# <img src=x onerror=alert(2)>\n'
    lines = source_highlighted_lines(source)
    assert len(lines) == 2
    html = "".join(lines)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in lines[0]
    assert "&lt;img src=x onerror=alert(2)&gt;" in lines[1]
