"""The help screen: every binding of the app and of its panels, generated from BINDINGS."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from dashboard.text.untrusted import escape_controls

KEY_NAMES = {
    "question_mark": "?",
    "equals_sign": "=",
    "plus": "+",
    "minus": "-",
    "escape": "Esc",
    "enter": "Enter",
    "space": "Space",
    "ctrl+p": "Ctrl+P",
    "ctrl+c": "Ctrl+C",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "f1": "F1",
    "exclamation_mark": "!",
    "up": "Up",
    "down": "Down",
    "home": "Home",
    "end": "End",
    "left": "Left",
    "right": "Right",
}


def key_text(key: str) -> str:
    """One key as it is typed: our names first, then any printable character by Textual's
    own name for it ('slash' -> '/', 'right_square_bracket' -> ']')."""
    if key in KEY_NAMES:
        return KEY_NAMES[key]
    shown = format_key(key)
    return shown if len(shown) == 1 else key


def keys_text(key: str) -> str:
    """'question_mark,f1' -> '? F1'."""
    return " ".join(key_text(k.strip()) for k in key.split(","))


def binding_rows(sections: Iterable[tuple[str, Iterable]]) -> list[tuple[str, str, str]]:
    """(section, keys, description) for every binding, in declaration order."""
    rows = []
    for section, bindings in sections:
        for b in bindings:
            b = b if isinstance(b, Binding) else Binding(*b)
            rows.append((section, keys_text(b.key), b.tooltip or b.description))
    return rows


class HelpScreen(ModalScreen[None]):
    """Lists every binding; Escape, q or ? closes it."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help", key_display="Esc")]

    def __init__(self, sections: list[tuple[str, Iterable]], notes: Sequence[str] = ()) -> None:
        super().__init__()
        self.sections = sections
        self.notes = tuple(notes)

    def compose(self) -> ComposeResult:
        # one heading row per panel rather than a panel column: the descriptions get the
        # width, wrap less, and the help scrolls less on a small terminal
        table = Table(box=None, expand=False, show_header=False, padding=(0, 1))
        table.add_column("keys", style="bold", no_wrap=True)
        table.add_column("does")
        section = None
        for name, keys, text in binding_rows(self.sections):
            if name != section:
                table.add_row(Text(name, style="bold underline"), "")
                section = name
            table.add_row(Text(f"  {keys}"), Text(text))  # never markup: '[' is a key
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys (Escape closes)"
            yield Static(table, id="help-keys")
            yield Static(
                "\nRows: Enter shows the whole row (query untruncated). Tables keep the "
                "cursor and marks by pid or job id across refreshes. '~' marks planner "
                "estimates; 'locked' counts rows row-locked right now.",
                classes="help-note",
            )
            if self.notes:
                # why an action is off may name the spec's tables and values: plain, escaped
                notes = "\n".join(escape_controls(n) for n in self.notes)
                yield Static(Text("\n" + notes), classes="help-note")
        yield Footer(compact=True, show_command_palette=False)

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(result)
