"""A footer whose keys are never cut: those past its width leave whole, from the right.

Textual's Footer scrolls keys it has no room for out of sight, so at 80 columns the last
one read `1234b Pane` or `space Mark a`. Here each key (or group of keys) that does not
end within the footer, the palette key aside, is hidden with all after it; the help
screen (?) and the palette (^p) list every key.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterLabel


class FittingFooter(Footer):
    def on_resize(self) -> None:
        self._fit()

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _items(self) -> list[Widget]:
        return [c for c in self.children if not c.has_class("-command-palette")]

    def _fit(self) -> None:
        """Hide the items that do not end in the room the palette key leaves."""
        if not self.is_attached:
            return
        items = self._items()
        hidden = [c for c in items if not c.display]
        if hidden:  # a wider footer: lay them all out again, then fit
            for item in hidden:
                item.display = True
            self.call_after_refresh(self._fit_shown)
            return
        self._fit_shown()

    def _fit_shown(self) -> None:
        if not self.is_attached:
            return
        self.scroll_to(x=0, animate=False)
        palette = [c for c in self.children if c.has_class("-command-palette")]
        room = self.region.right - sum(p.outer_size.width for p in palette)
        items = self._items()
        cut = False
        for n, item in enumerate(items):
            right = item.region.right + item.styles.margin.right
            if not cut and right > room:
                cut = True
                if isinstance(item, FooterLabel) and n:  # a group's keys go with its label
                    items[n - 1].display = False
            if cut:
                item.display = False
