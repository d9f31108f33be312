"""SVG snapshots on the toolkit's stock path (QUEUETOP_STOCK_UI): the same cells, compared
as cells.

Textual's own compositor hands the screenshot the same characters in the same styles as
dashboard/ui/forks' line compositor, but it may cut a run of them into segments at other
places (a pane's edge under a modal, a row's last cells), and Rich's SVG has one `<rect>`
and one `<text>` per segment. With QUEUETOP_STOCK_UI set, conftest.py has
pytest-textual-snapshot normalize both the stored and the taken SVG with `merge_runs`
too: adjacent rects of one fill, and adjacent texts of one class, on one line, become one,
then each text is cut at its blank cells (Rich writes no text for a segment of blanks).
A cell that differs (a character, a colour, a place) still fails the test.
"""

from __future__ import annotations

import html
import re

from rich.cells import cell_len

RECT = re.compile(
    r'<rect fill="(?P<fill>[^"]*)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'width="(?P<w>[\d.]+)" height="(?P<h>[\d.]+)" shape-rendering="crispEdges"/>'
)
TEXT = re.compile(
    r'<text class="(?P<cls>[^"]*)" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'textLength="(?P<w>[\d.]+)" clip-path="(?P<clip>[^"]*)">(?P<body>[^<]*)</text>'
)


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _merge(svg: str, pattern: re.Pattern, same: tuple[str, ...], render) -> str:
    out: list[str] = []
    pos = 0
    run: dict | None = None

    def flush() -> None:
        nonlocal run
        if run is not None:
            out.append(render(run))
            run = None

    for m in pattern.finditer(svg):
        if m.start() != pos:  # something else between: the run ends
            flush()
            out.append(svg[pos : m.start()])
        item = m.groupdict()
        item["x"], item["w"] = float(item["x"]), float(item["w"])
        if (
            run is not None
            and all(run[k] == item[k] for k in same)
            and abs(run["x"] + run["w"] - item["x"]) < 0.05
        ):
            run["w"] += item["w"]
            run["body"] = run.get("body", "") + item.get("body", "")
        else:
            flush()
            run = item
        pos = m.end()
    flush()
    out.append(svg[pos:])
    return "".join(out)


def _explode_texts(svg: str) -> str:
    """Each `<text>` as one per run of non-blank characters: Rich writes no `<text>` for a
    segment of blanks, so a blank cell is a cut in one picture and not in the other."""

    def split(m: re.Match) -> str:
        cls, y, clip = m["cls"], m["y"], m["clip"]
        x, width = float(m["x"]), float(m["w"])
        chars = re.findall(r"&#?\w+;|.", m["body"])
        cell = width / max(sum(cell_len(html.unescape(c)) for c in chars), 1)
        pieces, run, start = [], [], x
        for char in [*chars, "&#160;"]:
            if char == "&#160;" or char == " ":
                if run:
                    length = sum(cell_len(html.unescape(c)) for c in run) * cell
                    pieces.append(
                        f'<text class="{cls}" x="{_num(start)}" y="{y}" '
                        f'textLength="{_num(length)}" clip-path="{clip}">{"".join(run)}</text>'
                    )
                    start += length
                    run = []
                start += cell
            else:
                run.append(char)
        return "".join(pieces)

    return TEXT.sub(split, svg)


def merge_runs(svg: str) -> str:
    svg = _merge(
        svg,
        RECT,
        ("fill", "y", "h"),
        lambda r: (
            f'<rect fill="{r["fill"]}" x="{_num(r["x"])}" y="{r["y"]}" width="{_num(r["w"])}" '
            f'height="{r["h"]}" shape-rendering="crispEdges"/>'
        ),
    )
    svg = _merge(
        svg,
        TEXT,
        ("cls", "y", "clip"),
        lambda r: (
            f'<text class="{r["cls"]}" x="{_num(r["x"])}" y="{r["y"]}" '
            f'textLength="{_num(r["w"])}" clip-path="{r["clip"]}">{r["body"]}</text>'
        ),
    )
    return _explode_texts(svg)


def install() -> None:
    import pytest_textual_snapshot

    normalize = pytest_textual_snapshot.normalize_svg
    pytest_textual_snapshot.normalize_svg = lambda svg: merge_runs(normalize(svg))
