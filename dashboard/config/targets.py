"""Named targets: the databases a team watches, each by name, from one TOML file.

    # ~/.config/queuetop/targets.toml (or --targets FILE)
    [targets.prod]
    dsn = "host=db.prod dbname=app user=queuetop"   # or: service = "prod" (pg_service.conf)
    preset = "oban"                                   # optional: preset, table or queue
    [targets.staging]
    service = "staging"
    table = "jobs"

Passwords come from libpq's own sources (~/.pgpass, PGPASSWORD, a service file); a file
that holds one is refused while others can read it. Names are plain words, so a URL's
`?target=NAME` is looked up here and never taken for an address.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import conninfo

from dashboard.config.parse import parse_duration
from dashboard.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
KEYS = ("dsn", "service", "preset", "table", "queue", "stale_after")


@dataclass(frozen=True)
class NamedTarget:
    """One database a targets file names, and optionally which queue in it."""

    name: str
    dsn: str  # a libpq DSN or URL ("service=NAME" for a service)
    preset: str | None = None
    table: str | None = None
    queue: Path | None = None  # a queue TOML, relative paths taken from the file's folder
    stale_after: str | None = None  # as --stale-after takes it ("10m")

    @property
    def has_queue(self) -> bool:
        """Whether the target names its queue (else discovery finds the queues in it)."""
        return bool(self.preset or self.table or self.queue)


def default_path() -> Path:
    """~/.config/queuetop/targets.toml (XDG_CONFIG_HOME respected)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "queuetop" / "targets.toml"


def load(path: Path | str | None = None) -> dict[str, NamedTarget]:
    """The targets of `path` (default_path() when None), in the file's order."""
    given = path is not None
    path = Path(path) if given else default_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        hint = "pass --targets FILE" if not given else "check the path"
        raise UserError(f"no targets file at {path}: {hint} (docs/targets.md)") from None
    except OSError as exc:
        raise UserError(f"cannot read the targets file {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"targets file {path} is not valid TOML: {exc}") from None
    tables = data.get("targets")
    if not isinstance(tables, dict) or not tables:
        raise UserError(
            f"targets file {path} names no target: add a [targets.NAME] table with a dsn or service"
        )
    unknown = sorted(set(data) - {"targets"})
    if unknown:
        raise UserError(f"targets file {path}: unknown key {unknown[0]!r} (only [targets.NAME])")
    found = {name: _target(path, name, body) for name, body in tables.items()}
    _refuse_exposed_password(path, found.values())
    return found


def pick(targets: dict[str, NamedTarget], name: str) -> NamedTarget:
    """The target named `name`, or one line naming those the file has."""
    if name in targets:
        return targets[name]
    names = ", ".join(targets)
    raise UserError(f"no target named {name!r} in the targets file (it has: {names})")


def _target(path: Path, name: str, body: object) -> NamedTarget:
    where = f"targets file {path}, target {name!r}"
    if not NAME.match(name):
        raise UserError(f"{where}: a name is letters, digits, '_', '.', '-' (up to 63)")
    if not isinstance(body, dict):
        raise UserError(f"{where}: write it as a table, [targets.{name}]")
    unknown = sorted(set(body) - set(KEYS))
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    for key, value in body.items():
        if not isinstance(value, str) or not value.strip():
            raise UserError(f"{where}: {key} must be a non-empty string")
    if ("dsn" in body) == ("service" in body):
        raise UserError(f"{where}: give exactly one of dsn or service")
    dsn = body["dsn"] if "dsn" in body else conninfo.make_conninfo(service=body["service"])
    try:
        conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        raise UserError(f"{where}: the dsn is not a libpq DSN or URL") from None
    if sum(k in body for k in ("preset", "table", "queue")) > 1:
        raise UserError(f"{where}: give at most one of preset, table or queue")
    if "stale_after" in body:  # said here, not later as a --stale-after nobody typed
        parse_duration(body["stale_after"], f"stale_after of target {name!r} in {path}")
    queue = None
    if "queue" in body:
        queue = Path(body["queue"]).expanduser()
        if not queue.is_absolute():
            queue = path.parent / queue
    return NamedTarget(
        name=name,
        dsn=dsn,
        preset=body.get("preset"),
        table=body.get("table"),
        queue=queue,
        stale_after=body.get("stale_after"),
    )


def _refuse_exposed_password(path: Path, targets) -> None:
    holders = [t.name for t in targets if _password(t.dsn)]
    if not holders:
        return
    mode = path.stat().st_mode
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        raise UserError(
            f"targets file {path} holds a password (target {holders[0]!r}) and others can "
            f"read it: chmod 600 {path}, or move the password to ~/.pgpass"
        )


def _password(dsn: str) -> str | None:
    try:
        return conninfo.conninfo_to_dict(dsn).get("password") or None
    except psycopg.Error:
        return None
