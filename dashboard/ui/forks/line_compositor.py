"""A compositor whose partial updates draw only the lines that changed (the `compositor`
piece: see forks/__init__.py; forks/compositor.py switches it).

Textual's partial update joins the changed regions into one box and has every widget that
touches the box render all of its lines, then sends only the changed spans. On the
dashboard a poll changes the header (the top line), some of the state panel and a few table
rows near the bottom, so the box is most of the screen and each poll rendered every panel
in it, the plots that did not move among them. This one asks only the widgets a changed
span crosses, each for its lines from the first to the last changed one, and fills the same
chops from them: what reaches the terminal is the same (tests/test_ui_line_compositor.py
compares it with a full render).
"""

from __future__ import annotations

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip

Span = tuple[int, int, int]  # y, x1, x2 (end excluded): a changed piece of one line


class LineCompositor(Compositor):
    """Compositor with partial updates rendered line by line (see the module docstring)."""

    def render_partial_update(self) -> ChopsUpdate | None:
        regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        screen = self.size.region
        regions = [clipped for region in regions if (clipped := region.intersection(screen))]
        if not regions:
            return None
        spans = list(self._regions_to_spans(regions))
        return ChopsUpdate(self._changed_chops(spans), spans, [cut[1:] for cut in self.cuts])

    def _changed_chops(self, spans: list[Span]) -> list[dict[int, Strip | None]]:
        """The chops of every changed line, each cut filled by the front-most widget (the
        visible widgets come front to back, as in Compositor._render_chops). A widget is
        asked only for lines where a changed chop is still empty: one behind the widgets
        that filled them (a container, the screen) renders nothing."""
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut[:-1]) for cut in cuts]
        by_line: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in spans:
            by_line.setdefault(y, []).append((x1, x2))
        # the chops a changed span crosses, by line: those alone reach the terminal
        wanted = {
            line: [
                cut
                for cut, end in zip(cuts[line], cuts[line][1:], strict=False)
                if any(x1 < end and x2 > cut for x1, x2 in ranges)
            ]
            for line, ranges in by_line.items()
        }
        top, bottom = min(by_line), max(by_line) + 1
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            x, y, width, height = shown
            first_cut, last_cut = shown.column_span
            lines = [
                line
                for line in range(max(y, top), min(y + height, bottom))
                if any(
                    first_cut <= cut < last_cut and chops[line][cut] is None
                    for cut in wanted.get(line, ())
                )
            ]
            if not lines:
                continue
            # one call for the widget (each call costs its styles' lookup): the lines in
            # between that did not change come from its line cache and are not used
            start = lines[0]
            crop = Region(x - region.x, start - region.y, width, lines[-1] + 1 - start)
            strips = widget.render_lines(crop)
            for line in lines:
                chops_line = chops[line]
                line_cuts = [cut for cut in cuts[line] if last_cut >= cut >= first_cut]
                pieces = strips[line - start].divide([cut - x for cut in line_cuts[1:]])
                for cut, piece in zip(line_cuts, pieces, strict=False):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = piece
        return chops


class LineScreen(Screen):
    """A Screen drawn by the LineCompositor."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._compositor = LineCompositor()
