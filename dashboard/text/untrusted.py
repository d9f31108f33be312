"""Text from the database, a spec, the audit trail or a worker, made safe to show.

Such text is untrusted: a query, an application_name, a status value, a worker name or a
reason may hold terminal controls (ESC ] 52 sets the clipboard, ESC ] 2 the title, ESC [2J
clears the screen) or bidi overrides that reorder what a reader sees. Every place that
shows it (widgets, notifications, modals, plain-text output) passes it through here, and
shows the result as plain text, never as markup. JSON output keeps the exact text.
"""

from __future__ import annotations

# Unicode's line and paragraph separators are printable to Python but break a line
LINE_BREAKERS = "\u2028\u2029"


def _escaped(ch: str) -> str:
    if ch == "\n":
        return "\\n"
    if ch == "\t":
        return "\\t"
    if ch == "\r":
        return "\\r"
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def escape_controls(text: str, *, keep_newlines: bool = False) -> str:
    """Control characters (escapes, tabs, bells, C1 controls, bidi overrides, and newlines
    unless `keep_newlines`) as visible escapes, everything else as it is:
    'a\\x1b[2Jb' stays on one line and clears nothing."""
    if text.isprintable() and not any(c in LINE_BREAKERS for c in text):
        return text  # the common case, without a copy
    out = []
    for ch in text:
        if (ch.isprintable() and ch not in LINE_BREAKERS) or (keep_newlines and ch == "\n"):
            out.append(ch)
        else:
            out.append(_escaped(ch))
    return "".join(out)


def shown(value: object, *, keep_newlines: bool = False) -> str:
    """Any value (None as '-') as safe text."""
    if value is None:
        return "-"
    return escape_controls(str(value), keep_newlines=keep_newlines)


def printable(text: str) -> str:
    """A command's plain-text output (several lines) made safe for a terminal: its lines
    kept, every other control character escaped. Already escaped text stays as it is."""
    return escape_controls(text, keep_newlines=True)
