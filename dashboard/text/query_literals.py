"""Literals out of SQL text, as pg_stat_statements normalises them: for a recording to share.

    normalised("ALTER ROLE v PASSWORD 'S3cret'")  ->  "ALTER ROLE v PASSWORD ?"

String constants ('…' with '' inside, E'…' with backslash escapes, B'…', X'…', N'…', U&'…'),
dollar-quoted bodies ($$…$$, $tag$…$tag$) and numbers become `?`; identifiers (quoted or
not), keywords, parameters ($1) and comments' text outside literals stay. A literal cut by
the server's track_activity_query_size (no closing quote) is replaced to the end.
"""

from __future__ import annotations

import re

_LITERAL = re.compile(
    r"""
      (?P<dollar>\$(?P<tag>[A-Za-z_][A-Za-z_0-9]*)?\$.*?(?:\$(?P=tag)?\$|\Z))
    | (?P<escaped>[Ee]'(?:[^'\\]|\\.|'')*(?:'|\Z))
    | (?P<string>(?:[BbXxNn]|[Uu]&)?'(?:[^']|'')*(?:'|\Z))
    | (?P<ident>"(?:[^"]|"")*"?)
    | (?P<param>\$\d+)
    | (?P<word>[A-Za-z_][A-Za-z_0-9$]*)
    | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    """,
    re.DOTALL | re.VERBOSE,
)
KEPT = ("ident", "param", "word")


def normalised(query: str) -> str:
    """`query` with every literal replaced by `?`."""

    def one(match: re.Match[str]) -> str:
        return match.group(0) if match.lastgroup in KEPT else "?"

    return _LITERAL.sub(one, query)
