"""Options shared by the subcommands, and opening a validated queue."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

import psycopg

from dashboard import config, db
from dashboard.errors import UserError
from dashboard.models import ROLES, QueueSpec
from dashboard.text import redact

EXIT_USAGE = 2
# A flag for every optional column of the spec (--started-at-column COLUMN, ...).
COLUMN_FLAGS = {
    "created_at": "when the job was enqueued (oldest-ready age)",
    "scheduled_at": "when the job is due (ready rows due later read as scheduled)",
    "started_at": "when the job was claimed (stale after --stale-after without a lease)",
    "finished_at": "when the job ended, done or failed (run times: finished minus started)",
    "worker": "who holds the job",
    "worker_pid": "the backend pid of the session that claimed the job: a worker is then "
    "alive only while a session with that pid (and its name) exists",
    "attempts": "attempts so far",
    "max_attempts": "the job's own attempt limit",
    "lease_until": "the lease expiry (stale leases)",
    "lease_token": "the fencing token every owner write must match",
    "heartbeat": "the job's heartbeat (alive while recent)",
    "last_error": "the last error",
    "group": "queue name or task kind: counts and stale leases per group",
    "payload": "the job's arguments",
    "advisory_lock": "the key of the advisory lock a worker holds while it runs the job "
    "(running jobs are alive while it is held)",
}
# The dashboard's fastest refresh step (INTERVALS in dashboard/ui/app.py); a test ties them.
MIN_INTERVAL_S = 0.2
MAX_INTERVAL_S = 3600.0


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line: what is wrong and where to look."""

    def error(self, message: str) -> NoReturn:
        # argparse quotes the offending words back, a misplaced DSN and its password included
        message = redact.scrub(message)
        if message.startswith("argument COMMAND: invalid choice") and _looks_like_dsn(message):
            message += "; a DSN goes after the command: queuetop COMMAND --dsn DSN"
        print(f"{self.prog}: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _looks_like_dsn(text: str) -> bool:
    return "://" in text or "password=" in text or "host=" in text or "dbname=" in text


def checked(
    kind: Callable[[str], Any], accept: Callable[[Any], bool], expected: str
) -> Callable[[str], Any]:
    """An argparse `type` that refuses NaN, infinities and values outside `accept`.

    argparse turns the refusal into one usage line naming the flag, exit 2.
    """

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or not accept(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


def text(what: str) -> Callable[[str], str]:
    """An argparse `type` for a text flag that refuses an empty value: `--table "$UNSET"`
    must not fall back to the default queue (nor `--dsn ""` to another server)."""

    def parse(value: str) -> str:
        if not value.strip():
            raise argparse.ArgumentTypeError(
                f"expected {what}, got an empty value (an unset variable?)"
            )
        return value

    return parse


def dsn_value(value: str) -> str:
    """--dsn: not empty (the message says what omitting it does instead)."""
    if not value.strip():
        raise argparse.ArgumentTypeError(db.EMPTY_DSN)
    return value


PASSWORD_IN_DSN_WARNING = (
    "queuetop: warning: the password in --dsn can be read by other users of this machine "
    "(ps, /proc) for as long as queuetop runs; pass it in PGPASSWORD, ~/.pgpass or a "
    "service file instead (README: Security)"
)


def warn_password_in_dsn(args: argparse.Namespace) -> None:
    """Once per command that keeps running (watch, demo, load, export, serve): its argv
    stays visible for as long as it runs."""
    if getattr(args, "target", None):  # the DSN came from the targets file, not argv
        return
    if getattr(args, "dsn", None) and redact.password_in(args.dsn):
        print(PASSWORD_IN_DSN_WARNING, file=sys.stderr)


INTERVAL = checked(
    float,
    lambda v: MIN_INTERVAL_S <= v <= MAX_INTERVAL_S,
    f"a number of seconds from {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}",
)


def connection_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("connection")
    group.add_argument(
        "--dsn",
        type=dsn_value,
        help="libpq DSN or URL (default: DATABASE_URL, PG* variables, else the "
        "embedded server); keep the password out of it: PGPASSWORD, "
        "~/.pgpass or a service file",
    )
    group.add_argument(
        "--debug", dest="sub_debug", action="store_true", help="show tracebacks on errors"
    )
    return parent


def recovery_options() -> argparse.ArgumentParser:
    """--read-only and --audit-file: shared by the dashboard and the action commands."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("recovery actions")
    group.add_argument(
        "--read-only",
        action="store_true",
        help="refuse every action (for shared terminals and runbook rehearsals)",
    )
    group.add_argument(
        "--audit-file",
        metavar="PATH",
        type=text("a file path"),
        help="append the audit trail to this JSON-lines file instead of the "
        "queuetop.audit_log table",
    )
    return parent


def queue_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("queue spec (default: the demo preset)")
    group.add_argument(
        "--queue", metavar="FILE", type=text("a TOML file"), help="queue spec TOML file"
    )
    group.add_argument(
        "--preset",
        metavar="NAME",
        type=text("a preset name"),
        help=f"named preset: {', '.join(config.preset_names())}",
    )
    group.add_argument(
        "--table", type=text("a table name"), help="queue table, bare or schema-qualified"
    )
    group.add_argument(
        "--id-column",
        metavar="NAME",
        type=text("a column name"),
        action="append",
        help="job id column (again for each column of a composite key, in key order)",
    )
    group.add_argument(
        "--status-column", metavar="NAME", type=text("a column name"), help="state column"
    )
    group.add_argument(
        "--stale-after",
        metavar="DURATION",
        type=text("a duration"),
        help="running jobs without a lease expiry are stale after this",
    )
    group.add_argument(
        "--ready-value",
        metavar="VALUE",
        type=text("a state value"),
        help="the ready state value requeue and retry-dead write (with --table alone: "
        "else only a value the table holds)",
    )
    group.add_argument(
        "--dead-value",
        metavar="VALUE",
        type=text("a state value"),
        help="the state value dead-letter writes (sets policy dead_letter = status:VALUE)",
    )
    roles = parent.add_argument_group(
        "roles (override the spec; with --table alone the table is understood, these pin it)",
        "A state column's values per role, or, for a table without one, each role's "
        "conditions ('locked_at set', 'vt after now', 'read_ct above 0', 'picked = true', "
        "'status in (a, b)'); a row takes the first role that holds, in the order dead, "
        "failed, done, running, scheduled, ready.",
    )
    for role in ROLES:
        roles.add_argument(
            f"--{role}-values",
            dest=f"values_{role}",
            metavar="V[,V]",
            type=text("state values"),
            help=f"the state values of {role} jobs, comma separated",
        )
    for role in ROLES:
        roles.add_argument(
            f"--{role}-when",
            dest=f"when_{role}",
            metavar="CONDITIONS",
            type=text("conditions"),
            help=f"{role} jobs by conditions, comma separated",
        )
    columns = parent.add_argument_group(
        "columns (override the spec; with --table alone the table is understood)"
    )
    for key, what in COLUMN_FLAGS.items():
        columns.add_argument(
            f"--{key.replace('_', '-')}-column",
            dest=f"column_{key}",
            metavar="COLUMN",
            type=text("a column name"),
            help=what,
        )
    group.add_argument(
        "--interval",
        type=INTERVAL,
        default=2.0,
        metavar="SECONDS",
        help=f"refresh interval, {MIN_INTERVAL_S:g} to {MAX_INTERVAL_S:g}; "
        "monitoring statements time out within it",
    )
    return parent


def latency_window(value: str) -> float:
    """--latency-window: a duration up to a day (an argparse `type`: one usage line)."""
    try:
        return config.latency_window(value)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def latency_options() -> argparse.ArgumentParser:
    """--latency-window: for the commands that show or check how long jobs wait and run."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--latency-window",
        metavar="DURATION",
        type=latency_window,
        help="wait and run times over the jobs started or finished this long ago at most "
        "(default 5m, or the spec's policy latency_window; up to 24h)",
    )
    return parent


def spec_from_args(args: argparse.Namespace) -> QueueSpec:
    spec = _spec_from_args(args)
    window = getattr(args, "latency_window", None)
    if window is not None:
        spec = replace(spec, policy=replace(spec.policy, latency_window_s=window))
    return spec


def _spec_from_args(args: argparse.Namespace) -> QueueSpec:
    return config.build_spec(
        queue_file=args.queue,
        preset=args.preset,
        table=args.table,
        id_column=args.id_column,
        status_column=args.status_column,
        stale_after=args.stale_after,
        columns={key: getattr(args, f"column_{key}", None) for key in COLUMN_FLAGS},
        ready_value=getattr(args, "ready_value", None),
        dead_value=getattr(args, "dead_value", None),
        role_values={role: getattr(args, f"values_{role}", None) for role in ROLES},
        role_rules={role: getattr(args, f"when_{role}", None) for role in ROLES},
    )


def open_queue(args: argparse.Namespace) -> tuple[db.Target, psycopg.Connection, QueueSpec]:
    """Parse the spec, connect for monitoring, and validate the spec against the catalog."""
    spec = spec_from_args(args)  # bad TOML or preset fails before any connection
    target = db.resolve_target(args.dsn)
    conn = db.connect_monitor(target.dsn, timeout_ms=db.monitor_timeout_ms(args.interval))
    try:
        return target, conn, config.validate(conn, spec)
    except Exception:
        conn.close()
        raise
