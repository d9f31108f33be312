"""ReplaceFileScreen: asked before a saved rewind takes the place of a recording already there."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from dashboard.ui.plain import plain, plain_lines


class ReplaceFileScreen(ModalScreen[bool]):
    """Enter or y replaces the file, Escape or n keeps it (and saves nothing)."""

    DEFAULT_CSS = """
    ReplaceFileScreen { align: center middle; }
    ReplaceFileScreen > #replace-body {
        width: 80%; max-width: 100; height: auto; border: thick $warning; padding: 0 1;
        background: $surface;
    }
    """
    BINDINGS = [
        Binding("escape,n", "answer(False)", "No", key_display="Esc", tooltip="Keep the file"),
        Binding("enter,y", "answer(True)", "Replace", key_display="Enter", tooltip="Replace it"),
    ]

    def __init__(self, path: str, frames: int) -> None:
        super().__init__()
        self.path = path
        self.frames = frames

    def compose(self) -> ComposeResult:
        with Vertical(id="replace-body") as body:
            body.border_title = plain(f"Replace {self.path}?")
            yield Static(
                plain_lines(
                    f"{self.path} exists: a recording queuetop wrote for you. Replace it with "
                    f"the rewind's {self.frames} frames? Its frames are lost then.\n"
                    "Enter (or y): replace it   Escape (or n): keep it, save nothing"
                ),
                id="replace-what",
            )
        yield Footer(compact=True, show_command_palette=False)

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
