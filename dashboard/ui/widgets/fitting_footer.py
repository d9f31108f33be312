"""A footer whose keys are never cut: those past its width leave whole, from the right.

Textual's Footer scrolls keys it has no room for out of sight, so at 80 columns the last
one read `1234b Pane` or `space Mark a`. Here each key (or group of keys) that does not
end within the footer, the palette key aside, is hidden with all after it; the help
screen (?) and the palette (^p) list every key.
"""

from __future__ import annotations

from textual.widget import Widget
from textual.widgets import Footer, Label

# the app's attribute naming the actions its footer leaves out (ui/footer_fit.py sets it
# when it cannot edit the app's binding map: the `bindings` piece of ui/forks off)
LEFT_OUT = "queuetop_footer_left_out"


class FittingFooter(Footer):
    def on_resize(self) -> None:
        self._fit()

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _items(self) -> list[Widget]:
        return [c for c in self.children if not c.has_class("-command-palette")]

    def _wanted(self, items: list[Widget]) -> list[bool]:
        """Per item: not left out (a key, or a group whose keys all are, and its label)."""
        left_out = getattr(self.app, LEFT_OUT, frozenset())
        wanted: list[bool] = []
        for n, item in enumerate(items):
            if isinstance(item, Label):  # a group's label goes with its keys
                wanted.append(wanted[n - 1] if n else True)
                continue
            keys = [item, *item.children]
            actions = [a for key in keys if (a := getattr(key, "action", None)) is not None]
            wanted.append(not actions or not all(a in left_out for a in actions))
        return wanted

    def _fit(self) -> None:
        """Hide the items that do not end in the room the palette key leaves."""
        if not self.is_attached:
            return
        items = self._items()
        left_out = getattr(self.app, LEFT_OUT, frozenset())
        changed = False
        for item, want in zip(items, self._wanted(items), strict=True):
            if item.display != want:  # a wider footer: lay them all out again, then fit
                item.display = want
                changed = True
            for key in item.children:  # a group's keys: those left out go alone
                shown = getattr(key, "action", None) not in left_out
                if key.display != shown:
                    key.display = shown
                    changed = True
        if changed:
            self.call_after_refresh(self._fit_shown)
            return
        self._fit_shown()

    def _fit_shown(self) -> None:
        if not self.is_attached:
            return
        self.scroll_to(x=0, animate=False)
        palette = [c for c in self.children if c.has_class("-command-palette")]
        room = self.region.right - sum(p.outer_size.width for p in palette)
        items = [c for c in self._items() if c.display]
        cut = False
        for n, item in enumerate(items):
            right = item.region.right + item.styles.margin.right
            if not cut and right > room:
                cut = True
                # a group's keys go with its label (Footer's only Label: its keys are not)
                if isinstance(item, Label) and n:
                    items[n - 1].display = False
            if cut:
                item.display = False
