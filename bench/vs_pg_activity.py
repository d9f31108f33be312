"""queuetop watch beside pg_activity: client CPU, backend CPU and RSS on the demo under load.

The demo queue of a private embedded server (or --dsn) is kept busy by the load
generator (`queuetop load`, its own processes) for the whole run. Then each
monitor runs alone for a window, in a pseudo-terminal of 200x50, at the same
refresh interval: `queuetop watch --interval 1` and `pg_activity --refresh 1`,
alternating which one goes first in each round. For each window the bench reads
/proc: the client's CPU, its backend's CPU (the server process serving the
monitor's own connection) and the client's RSS. The client's CPU is its threads'
run time from schedstat, to the nanosecond (the figure the ratio is taken of); its
user + system time in clock ticks is printed beside it, as a cross-check: at a few
tenths of a percent a 30 s window holds some 10-20 ticks, so that figure moves by
10 % with one tick. It prints each window, the mean per monitor, and queuetop /
pg_activity ratios.

pg_activity is installed on first use into .cache/pg_activity (pip --target),
which git ignores. Numbers measured on a shared machine are noisy: the ratio of
windows measured side by side in one run is what to read.

    .venv/bin/python bench/vs_pg_activity.py [--window 30] [--rounds 2] [--interval 1]

With --pieces, each piece of dashboard/ui/forks is measured alone (issue 33): besides
queuetop (every piece on) and pg_activity, queuetop with one piece off at a time
(QUEUETOP_STOCK_UI=PIECE) and with all of them off, every variant in each round, the
order rotated from round to round. The report gives each variant's client CPU against
pg_activity's and what turning the piece off costs against queuetop's own.

With --floor, a third monitor joins each round: bench/textual_floor.py, the least a Textual
monitor does (one statement and one repainted label per interval, on queuetop's App base).
Its CPU is the floor Textual sets under queuetop's own work; the report gives it against
pg_activity's, and queuetop's CPU above it.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import signal
import statistics
import struct
import subprocess
import sys
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import process_cpu_s, process_run_s, server  # noqa: E402
from dashboard.loadgen.settings import DEMO_SETTINGS  # noqa: E402
from dashboard.setup import schema  # noqa: E402

PG_ACTIVITY_DIR = ROOT / ".cache" / "pg_activity"
PG_ACTIVITY_VERSION = "3.6.2"
COLUMNS, LINES = 200, 50
WARMUP_S = 5.0  # past the start: imports, the first polls, the capability check
QUEUETOP = "queuetop"
PG_ACTIVITY = "pg_activity"
FLOOR = "textual-floor"  # bench/textual_floor.py


def ensure_pg_activity() -> Path:
    """pg_activity into an ignored folder of this checkout, once."""
    if not (PG_ACTIVITY_DIR / "pgactivity").is_dir():
        print(f"installing pg_activity {PG_ACTIVITY_VERSION} into {PG_ACTIVITY_DIR} ...")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--target",
                str(PG_ACTIVITY_DIR),
                f"pg_activity=={PG_ACTIVITY_VERSION}",
            ],
            check=True,
        )
    return PG_ACTIVITY_DIR


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Terminal:
    """A child process on a pseudo-terminal of COLUMNS x LINES, its output drained."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        self.master = master
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.received = 0
        self.started_at = time.monotonic()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.received += len(chunk)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # queuetop: as `q`; pg_activity: ends
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)
        self._reader.join(2)


@dataclass
class Window:
    monitor: str
    client_pct: float  # run time (schedstat)
    client_ticks_pct: float  # user + system time, in clock ticks (/proc/PID/stat)
    backend_pct: float
    rss_mb: float
    bytes_per_s: float


def backend_pids(conn: psycopg.Connection, app: str, exclude: set[int]) -> list[int]:
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
        " AND backend_type = 'client backend'",
        (app,),
    ).fetchall()
    return [r[0] for r in rows if r[0] not in exclude]


STOCK = "stock"  # the variant with every piece off
AGAINST = "against"  # queuetop-against: queuetop from another checkout (--against)
AGAINST_DIR: Path | None = None


def variant_env(monitor: str) -> dict[str, str]:
    """queuetop-PIECE: that piece off; queuetop-stock: every piece off; queuetop: all on."""
    env = {k: v for k, v in os.environ.items() if k != "QUEUETOP_STOCK_UI"}
    if monitor == f"{QUEUETOP}-{AGAINST}":  # its packages before this checkout's
        env["PYTHONPATH"] = str(AGAINST_DIR)
    elif monitor.startswith(QUEUETOP + "-"):
        piece = monitor.removeprefix(QUEUETOP + "-")
        env["QUEUETOP_STOCK_UI"] = "1" if piece == STOCK else piece
    return env


@dataclass
class Running:
    """A monitor started in its terminal, and the server processes serving it."""

    monitor: str
    term: Terminal
    backends: list[int]


@dataclass
class Reading:
    run_s: float  # the client's threads' run time (schedstat)
    cpu_s: float  # its user + system time (clock ticks)
    server_s: float  # its backends' CPU
    received: int  # bytes it wrote to its terminal
    at: float


def launch(monitor: str, dsn: str, interval: float, claimed: set[int]) -> Running:
    """`monitor` in a terminal of its own, once its connection is up; `claimed`: backends
    already known to serve another monitor of the same name (--together)."""
    env = {**variant_env(monitor), "TERM": "xterm-256color"}
    env.update(COLUMNS=str(COLUMNS), LINES=str(LINES))
    if monitor.startswith(QUEUETOP):
        argv = [
            # not the working directory first (python -c puts it there): queuetop-against's
            # PYTHONPATH must come before this checkout, installed editable, is found
            *[
                sys.executable,
                "-c",
                "import sys; del sys.path[0]; from dashboard.cli import main; main()",
            ],
            "watch",
            "--dsn",
            dsn,
            "--interval",
            f"{interval:g}",
        ]
        app = "queuetop"
    elif monitor == FLOOR:
        argv = [sys.executable, str(ROOT / "bench" / "textual_floor.py"), dsn]
        argv += ["--interval", f"{interval:g}"]
        app = FLOOR
    else:
        argv = [sys.executable, "-m", "pgactivity", "--refresh", f"{interval:g}", dsn]
        env["PYTHONPATH"] = str(PG_ACTIVITY_DIR)
        app = "pg_activity"
    with psycopg.connect(dsn, autocommit=True, application_name="queuetop-bench") as conn:
        term = Terminal(argv, env)
        try:
            deadline = time.monotonic() + 60
            while not backend_pids(conn, app, claimed):
                if term.proc.poll() is not None:
                    raise SystemExit(f"{app} exited with {term.proc.returncode} before connecting")
                if time.monotonic() > deadline:
                    raise SystemExit(f"{app} did not connect within 60 s")
                time.sleep(0.2)
            time.sleep(WARMUP_S)
            # queuetop's short-lived connections (the permission check) are gone by now
            backends = backend_pids(conn, app, claimed)
        except BaseException:
            term.stop()
            raise
    return Running(monitor, term, backends)


def reading(running: Running) -> Reading:
    pid = running.term.proc.pid
    if running.term.proc.poll() is not None:
        raise SystemExit(f"{running.monitor} exited with {running.term.proc.returncode}")
    return Reading(
        process_run_s(pid),
        process_cpu_s(pid),
        sum(process_cpu_s(p) for p in running.backends),
        running.term.received,
        time.monotonic(),
    )


def window_of(running: Running, a: Reading, b: Reading) -> Window:
    wall = b.at - a.at
    return Window(
        running.monitor,
        100 * (b.run_s - a.run_s) / wall,
        100 * (b.cpu_s - a.cpu_s) / wall,
        100 * (b.server_s - a.server_s) / wall,
        rss_mb(running.term.proc.pid),
        (b.received - a.received) / wall,
    )


def measure(monitor: str, dsn: str, interval: float, window: float, settle: float) -> Window:
    """One monitor alone: started, run `settle` seconds past its start, measured a window."""
    running = launch(monitor, dsn, interval, set())
    try:
        time.sleep(max(settle - WARMUP_S, 0.0))
        a = reading(running)
        time.sleep(window)
        return window_of(running, a, reading(running))
    finally:
        running.term.stop()


def measure_together(
    monitors: list[str], dsn: str, interval: float, window: float, settle: float, rounds: int
) -> list[Window]:
    """Every monitor started at once and kept running; after `settle` seconds, `rounds`
    windows measured on all of them at the same moments (the same load, the same noise)."""
    started: list[Running] = []
    claimed: set[int] = set()
    try:
        for name in monitors:
            started.append(launch(name, dsn, interval, claimed))
            claimed.update(started[-1].backends)
        first = min(r.term.started_at for r in started)
        time.sleep(max(settle - (time.monotonic() - first), 0.0))
        windows = []
        for r in range(rounds):
            before = [reading(m) for m in started]
            time.sleep(window)
            after = [reading(m) for m in started]
            for m, a, b in zip(started, before, after, strict=True):
                windows.append(window_of(m, a, b))
                print_window(r, windows[-1])
        return windows
    finally:
        for m in started:
            m.term.stop()


def print_window(r: int, w: Window) -> None:
    print(
        f"  round {r + 1} {w.monitor:22} client {w.client_pct:6.3f}% "
        f"(ticks {w.client_ticks_pct:4.2f}%)  backend "
        f"{w.backend_pct:5.2f}%  RSS {w.rss_mb:4.0f} MB  "
        f"terminal {w.bytes_per_s / 1024:6.1f} KiB/s",
        flush=True,
    )


def start_load(dsn: str, seconds: float, workers: int) -> subprocess.Popen:
    queuetop = str(Path(sys.executable).with_name("queuetop"))
    return subprocess.Popen(
        [
            queuetop,
            "load",
            "--dsn",
            dsn,
            "--workers",
            str(workers),
            "--duration",
            f"{seconds:.0f}",
            "--fail-rate",
            "0.02",
            # the demo's own rate and work: without them the workers only drain what is
            # already queued and then sit idle, which is not "under load"
            "--rate",
            f"{DEMO_SETTINGS.rate:g}",
            "--work-ms",
            f"{DEMO_SETTINGS.work_ms:g}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def report(windows: list[Window]) -> None:
    print()
    print(
        f"{'window':>6} {'monitor':12} {'client CPU':>11} {'(ticks)':>8} {'backend CPU':>12} "
        f"{'RSS':>8}"
    )
    for i, w in enumerate(windows, 1):
        print(
            f"{i:>6} {w.monitor:12} {w.client_pct:10.3f}% {w.client_ticks_pct:7.2f}% "
            f"{w.backend_pct:11.2f}% {w.rss_mb:6.0f} MB"
        )
    mean = {}
    for name in dict.fromkeys(w.monitor for w in windows):
        mine = [w for w in windows if w.monitor == name]
        mean[name] = (
            statistics.mean(w.client_pct for w in mine),
            statistics.mean(w.client_ticks_pct for w in mine),
            statistics.mean(w.backend_pct for w in mine),
            statistics.mean(w.rss_mb for w in mine),
        )
        c, t, b, r = mean[name]
        print(f"{'mean':>6} {name:12} {c:10.3f}% {t:7.2f}% {b:11.2f}% {r:6.0f} MB")
    (qc, qt, qb, qr), (pc, pt, pb, pr) = mean[QUEUETOP], mean[PG_ACTIVITY]
    print(
        f"queuetop / pg_activity: client CPU {qc / max(pc, 1e-9):.2f}x (target <= 2; in "
        f"ticks {qt / max(pt, 1e-9):.2f}x), backend CPU {qb / max(pb, 1e-9):.2f}x, "
        f"RSS {qr / max(pr, 1e-9):.2f}x"
    )
    # the ratio within each round (its windows measured minutes apart, not a run apart)
    per_round = len(mean)
    ratios = []
    for start in range(0, len(windows) - per_round + 1, per_round):
        rnd = {w.monitor: w.client_pct for w in windows[start : start + per_round]}
        ratios.append(rnd[QUEUETOP] / max(rnd[PG_ACTIVITY], 1e-9))
    print(
        "queuetop / pg_activity round by round: "
        + ", ".join(f"{r:.2f}x" for r in ratios)
        + f" (median {statistics.median(ratios):.2f}x)"
    )
    if FLOOR in mean:
        fc = mean[FLOOR][0]
        print(
            f"textual floor / pg_activity: client CPU {fc / max(pc, 1e-9):.2f}x; queuetop above "
            f"the floor: {qc - fc:.3f} points ({(qc - fc) / max(pc, 1e-9):.2f}x pg_activity's)"
        )
    variants = [n for n in mean if n.startswith(QUEUETOP + "-")]
    if variants:
        print()
        print(f"{'variant':24} {'client CPU':>11} {'/ pg_activity':>14} {'/ all pieces on':>16}")
        for name in [QUEUETOP, *variants]:
            c = mean[name][0]
            print(f"{name:24} {c:10.3f}% {c / max(pc, 1e-9):13.2f}x {c / max(qc, 1e-9):15.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="a server to use (default: a private embedded one)")
    parser.add_argument("--window", type=float, default=30.0, help="seconds per window")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, both orders alternating")
    parser.add_argument("--interval", type=float, default=1.0, help="both monitors' refresh")
    parser.add_argument("--workers", type=int, default=4, help="load generator workers")
    parser.add_argument(
        "--pieces",
        action="store_true",
        help="also queuetop with each piece of dashboard/ui/forks off, and with all off",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also bench/textual_floor.py: one statement and one label per interval",
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=WARMUP_S,
        help=f"seconds a monitor runs before it is measured (at least {WARMUP_S:g}); "
        "queuetop's plots fill up over 300 polls, 310 at --interval 1",
    )
    parser.add_argument(
        "--together",
        action="store_true",
        help="run every monitor at once for the whole bench and measure them side by side "
        "(with --settle 310: queuetop with a full history)",
    )
    parser.add_argument(
        "--against",
        metavar="DIR",
        type=Path,
        help="also queuetop from another checkout (e.g. a git worktree of an earlier "
        "commit), as queuetop-against; best with --together",
    )
    args = parser.parse_args()
    monitors = [QUEUETOP, PG_ACTIVITY]
    if args.against:
        global AGAINST_DIR
        AGAINST_DIR = args.against.resolve()
        if not (AGAINST_DIR / "dashboard" / "cli").exists():
            parser.error(f"--against {args.against}: no queuetop checkout there (no dashboard/cli)")
        monitors.append(f"{QUEUETOP}-{AGAINST}")
        imported = subprocess.run(  # the very import the monitor makes
            [
                sys.executable,
                "-c",
                "import sys; del sys.path[0]; import dashboard as d; print(d.__file__)",
            ],
            env=variant_env(monitors[-1]),
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not imported.startswith(str(AGAINST_DIR)):
            parser.error(f"--against {args.against}: queuetop-against would run {imported}")
    if args.floor:
        monitors.append(FLOOR)
    if args.pieces:
        from dashboard.ui.forks import PIECES

        monitors += [f"{QUEUETOP}-{piece}" for piece in (*PIECES, STOCK)]
    ensure_pg_activity()
    with server(args.dsn) as dsn:
        schema.ensure_demo(dsn)
        settle = max(args.settle, WARMUP_S)
        if args.together:
            seconds = settle + args.rounds * args.window + len(monitors) * (WARMUP_S + 5)
        else:
            seconds = args.rounds * len(monitors) * (args.window + settle + 8)
        load = start_load(dsn, seconds + 30, args.workers)
        try:
            time.sleep(3)  # the workers connect, the producer fills the queue
            how = "all at once" if args.together else "one at a time"
            print(
                f"demo under load ({args.workers} workers), {args.window:g}s windows at "
                f"{COLUMNS}x{LINES}, refresh {args.interval:g}s, {args.rounds} rounds, "
                f"monitors {how}, measured {settle:g}s after their start "
                "(measured while the machine may be shared)"
            )
            if args.together:
                windows = measure_together(
                    monitors, dsn, args.interval, args.window, settle, args.rounds
                )
            else:
                windows = []
                for r in range(args.rounds):
                    shift = r % len(monitors)  # each round starts one variant later
                    order = monitors[shift:] + monitors[:shift]
                    if len(monitors) == 2 and r % 2:
                        order = [PG_ACTIVITY, QUEUETOP]
                    for name in order:
                        windows.append(measure(name, dsn, args.interval, args.window, settle))
                        print_window(r, windows[-1])
        finally:
            load.terminate()
            load.wait(60)
    report(windows)


if __name__ == "__main__":
    main()
