"""The geometry of a small horizontal bar chart, drawn as inline SVG by the page template.

Only numbers are computed here; the template writes the SVG elements, so every label (a rule
id comes from a contract) goes through the same HTML escaping as the rest of the page. No
script, no font or stylesheet from elsewhere: the pages work on machines without internet.
"""

from __future__ import annotations

LABEL_WIDTH = 260   # px for the rule id, left of the bars
BAR_WIDTH = 300     # px of the longest bar
ROW_HEIGHT = 22
BAR_HEIGHT = 14
MAX_BARS = 12       # the rules that failed most; the rest are summed up in one line


def bar_chart(items: list[tuple[str, int, int]]) -> dict | None:
    """``items``: (rule id, submissions, rows), largest first. None when there is nothing to draw."""
    if not items:
        return None
    shown, rest = items[:MAX_BARS], items[MAX_BARS:]
    largest = max(submissions for _, submissions, _ in shown)
    bars = []
    for index, (rule, submissions, rows) in enumerate(shown):
        top = index * ROW_HEIGHT
        bars.append({
            "rule": rule, "submissions": submissions, "rows": rows,
            "y": top + (ROW_HEIGHT - BAR_HEIGHT) // 2, "text_y": top + ROW_HEIGHT // 2 + 4,
            "x": LABEL_WIDTH, "width": max(2, round(BAR_WIDTH * submissions / largest)), "height": BAR_HEIGHT,
        })
    return {"bars": bars, "width": LABEL_WIDTH + BAR_WIDTH + 160, "height": len(shown) * ROW_HEIGHT,
            "label_x": LABEL_WIDTH - 8, "more": len(rest)}
