"""A panel drawn line by line from (text, style) parts, as the header is: a poll that
changes two numbers repaints those two lines, and nothing builds or lays out a Rich Text
(laid out as a Static, the state panel cost more than a millisecond on every poll)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from dashboard.ui.widgets.text_strip import Part, parts_strip, parts_text

Line = tuple[Part, ...]  # a line of the panel: its parts


class LinesPanel(Widget):
    """Shows a list of lines (`_draw`), each cut to the width with an ellipsis."""

    _lines: list[Line] = []  # what it shows now, a line of parts each
    _strips: dict[int, Strip]  # a line drawn at _strip_width
    _strip_width = 0
    _base: Style | None = None  # rich_style, read once per paint (render_lines)

    def on_mount(self) -> None:
        self._strips = {}

    def render(self) -> Text:
        """All its lines as one Text (what the lines draw)."""
        parts: list[Part] = []
        for y, line in enumerate(self._lines):
            if y:
                parts.append(("\n", ""))
            parts += line
        return parts_text(parts)

    def render_lines(self, crop):
        # the panel's style walks its ancestors' backgrounds: look it up once per paint
        self._base = self.rich_style
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width, base = self.content_size.width, self._base or self.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, base)
        if self._strip_width != width:
            self._strips, self._strip_width = {}, width
        strip = self._strips.get(y)
        if strip is None:
            strip = self._strips[y] = parts_strip(self._lines[y], width)
        return strip.apply_style(base)

    def _draw(self, lines: list[Line]) -> None:
        """Show `lines`, repainting only those that differ from what is shown."""
        old = self._lines
        changed = [
            y
            for y in range(max(len(lines), len(old)))
            if y >= len(lines) or y >= len(old) or lines[y] != old[y]
        ]
        if not changed:
            return
        self._lines = lines
        for y in changed:
            self._strips.pop(y, None)
        if 2 * len(changed) > len(lines):
            self.refresh()
        else:
            width = self.content_size.width
            self.refresh(*(Region(0, y, width, 1) for y in changed))
