"""Passwords out of everything queuetop prints: errors, usage lines, warnings, the header.

Two nets: a DSN-shaped text (`scheme://user:PASSWORD@`, `password=PASSWORD`)
is masked wherever it appears, parsable or not; and the passwords queuetop
was given (in its arguments, DATABASE_URL or PGPASSWORD) are masked
wherever they appear verbatim, e.g. quoted back by libpq in a parse error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

import psycopg
from psycopg import conninfo

MASK = "***"
# Shorter known passwords are masked only where a DSN shape shows them: masking every
# two-letter sequence of a message would garble it without protecting anything.
MIN_VERBATIM = 3
# scheme://user:PASSWORD@ (the password runs to the last '@' of the word)
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#]*:)(?P<pw>\S*)(?P<at>@)")
# password=PASSWORD in a key=value DSN, quoted or not
_KEYWORD_PASSWORD = re.compile(
    r"(?P<head>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'?|[^\s'\"]+)", re.IGNORECASE
)

_known: set[str] = set()


def password_in(dsn: str) -> str | None:
    """The password a DSN carries (parsed, or found by its shape if libpq cannot parse it)."""
    try:
        return conninfo.conninfo_to_dict(dsn).get("password") or None
    except psycopg.Error:
        pass
    for pattern in (_URL_PASSWORD, _KEYWORD_PASSWORD):
        match = pattern.search(dsn)
        if match and match.group("pw"):
            return match.group("pw").strip("'")
    return None


def remember(secrets: Iterable[str | None]) -> None:
    """Mask these passwords verbatim from now on (their URL-encoded forms too)."""
    for secret in secrets:
        if secret:
            _known.update({secret, unquote(secret), quote(secret, safe="")})


def remember_given(argv: Iterable[str]) -> None:
    """The passwords in the command line and in the environment (DATABASE_URL, PGPASSWORD)."""
    words = [w.partition("=")[2] if w.startswith("--") else w for w in argv]
    remember(password_in(w) for w in words if "=" in w or "://" in w)
    remember([os.environ.get("PGPASSWORD")])
    if os.environ.get("DATABASE_URL"):
        remember([password_in(os.environ["DATABASE_URL"])])


def scrub(text: str) -> str:
    """`text` with every password masked."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}{m['at']}", text)
    text = _KEYWORD_PASSWORD.sub(lambda m: f"{m['head']}{MASK}", text)
    for secret in sorted(_known, key=len, reverse=True):
        if len(secret) >= MIN_VERBATIM:
            text = text.replace(secret, MASK)
    return text


def forget_all() -> None:
    """For tests: start from no known password."""
    _known.clear()
