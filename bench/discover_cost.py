"""What understanding costs: `discover` on 10,000 tables, and a poll understood vs described.

    .venv/bin/python bench/discover_cost.py [--dsn DSN] [--tables 10000] [--big-rows 5000000]
                                            [--runs 5]

Builds database `qt_bench_discover`: --tables tables in all, in 20 schemas. Most are what
an application keeps (orders with a status, users, audit logs, settings, payments: the
decoys, several thousand with a state word and timestamps), a few are queues nobody
described: four small hand-rolled ones (a Portuguese `fila_tarefas`, an uppercase
`Jobs`-like, a timestamp-state `background_jobs`, a visibility-timeout `q_mail`) and
`big.tasks`, a hand-rolled queue of --big-rows rows (state in new, working, finished,
error; 0.1 % active). ANALYZE, as autovacuum would have by then.

Then, side by side in one run:
- `queuetop discover --json` as a user runs it (a fresh process, its startup included):
  the median wall time of --runs runs, against the target of 2 s, and the same discovery
  in this process (the reads only);
- the monitor's poll on `big.tasks` understood (`--table big.tasks`, the spec filled by
  understanding) and described (the TOML discovery printed for it, loaded as a file),
  alternately, the median database time of each and their ratio (target 1.0: the same
  statements), and whether both counted the same.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import server  # noqa: E402
from bench.poll_cost import db_time, every_section_due  # noqa: E402
from dashboard import config, db, discover  # noqa: E402
from dashboard.monitor import Monitor  # noqa: E402

DB = "qt_bench_discover"
SCHEMAS = 20
QUEUES = ("public.fila_tarefas", "public.jobs_upper", "public.background_jobs", "public.q_mail")
BIG = "big.tasks"

# One kind of ordinary table per remainder of its number: what applications keep.
DECOY_KINDS = (
    """CREATE TABLE {s}.orders_{n} (id bigserial PRIMARY KEY, customer_id bigint NOT NULL,
       status text NOT NULL DEFAULT 'pending', total numeric(12,2),
       created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz DEFAULT now());
       INSERT INTO {s}.orders_{n} (customer_id, status, total)
       SELECT g, (ARRAY['pending','paid','shipped','cancelled'])[1 + g % 4], g
       FROM generate_series(1, 20) g""",
    """CREATE TABLE {s}.users_{n} (id bigserial PRIMARY KEY, email text UNIQUE,
       status text DEFAULT 'active', last_login_at timestamptz,
       created_at timestamptz DEFAULT now());
       INSERT INTO {s}.users_{n} (email, status, last_login_at)
       SELECT 'u' || g || '@x', (ARRAY['active','banned'])[1 + g % 2], now()
       FROM generate_series(1, 10) g""",
    """CREATE TABLE {s}.audit_log_{n} (id bigserial PRIMARY KEY, action text, actor text,
       at timestamptz DEFAULT now(), detail jsonb)""",
    """CREATE TABLE {s}.settings_{n} (key text PRIMARY KEY, value text,
       updated_at timestamptz DEFAULT now())""",
    """CREATE TABLE {s}.payments_{n} (id bigserial PRIMARY KEY, order_id bigint,
       state text CHECK (state IN ('authorized','captured','refunded','failed')),
       amount numeric(12,2), processed_at timestamptz, created_at timestamptz DEFAULT now());
       INSERT INTO {s}.payments_{n} (order_id, state, amount, processed_at)
       SELECT g, (ARRAY['authorized','captured','refunded','failed'])[1 + g % 4], g, now()
       FROM generate_series(1, 8) g""",
)

SMALL_QUEUES = """
CREATE TABLE public.fila_tarefas (
    tarefa_id  bigserial PRIMARY KEY,
    estado     text NOT NULL DEFAULT 'pendente'
               CHECK (estado IN ('pendente', 'processando', 'concluida')),
    carga      jsonb,
    pego_por   text,
    pego_em    timestamptz,
    criado_em  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO public.fila_tarefas (estado, pego_por, pego_em)
SELECT (ARRAY['pendente','processando','concluida'])[1 + g % 3],
       CASE WHEN g % 3 > 0 THEN 'w' END, CASE WHEN g % 3 > 0 THEN now() END
FROM generate_series(1, 60) g;
CREATE TABLE public.jobs_upper (
    job_id     bigserial PRIMARY KEY,
    status     text NOT NULL DEFAULT 'ENQUEUED',
    worker     text,
    started_at timestamptz,
    finished_at timestamptz
);
INSERT INTO public.jobs_upper (status, worker, started_at, finished_at)
SELECT (ARRAY['ENQUEUED','PROCESSING','SUCCEEDED'])[1 + g % 3],
       CASE WHEN g % 3 > 0 THEN 'w' END, CASE WHEN g % 3 > 0 THEN now() END,
       CASE WHEN g % 3 = 2 THEN now() END
FROM generate_series(1, 60) g;
CREATE TABLE public.background_jobs (
    id bigserial PRIMARY KEY, priority int NOT NULL DEFAULT 0, attempts int NOT NULL DEFAULT 0,
    handler text NOT NULL, last_error text, run_at timestamptz NOT NULL DEFAULT now(),
    locked_at timestamptz, locked_by text, failed_at timestamptz, queue text,
    created_at timestamptz DEFAULT now()
);
INSERT INTO public.background_jobs (handler, locked_at, locked_by)
SELECT 'h', CASE WHEN g % 4 = 0 THEN now() END, CASE WHEN g % 4 = 0 THEN 'w' END
FROM generate_series(1, 60) g;
CREATE TABLE public.q_mail (
    msg_id bigserial PRIMARY KEY, read_ct int NOT NULL DEFAULT 0,
    enqueued_at timestamptz NOT NULL DEFAULT now(), vt timestamptz NOT NULL DEFAULT now(),
    message jsonb
);
INSERT INTO public.q_mail (read_ct, vt, message)
SELECT g % 2, now() + (g % 2) * interval '30 seconds', '{}' FROM generate_series(1, 60) g
"""

BIG_QUEUE = """
CREATE SCHEMA big;
CREATE TABLE big.tasks (
    task_no   bigserial PRIMARY KEY,
    state     text NOT NULL DEFAULT 'new',
    payload   jsonb,
    locked_by text,
    locked_at timestamptz,
    attempts  int NOT NULL DEFAULT 0
);
INSERT INTO big.tasks (state, payload, locked_by, locked_at, attempts)
SELECT CASE WHEN g % 1000 = 0 THEN 'new' WHEN g % 1000 = 1 THEN 'working'
            WHEN g % 50 = 2 THEN 'error' ELSE 'finished' END,
       jsonb_build_object('n', g),
       CASE WHEN g % 1000 <> 0 THEN 'box-' || (g % 7) END,
       CASE WHEN g % 1000 <> 0 THEN now() - (g % 300) * interval '1 minute' END,
       CASE WHEN g % 1000 = 0 THEN 0 ELSE 1 END
FROM generate_series(1, %(rows)s) g;
CREATE INDEX tasks_active ON big.tasks (state) WHERE state IN ('new', 'working')
"""


def build(dsn: str, tables: int, big_rows: int) -> str:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    target = psycopg.conninfo.make_conninfo(dsn, dbname=DB)
    decoys = tables - len(QUEUES) - 1
    started = time.perf_counter()
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("SET statement_timeout = 0")
        for s in range(SCHEMAS):
            conn.execute(f"CREATE SCHEMA app_{s}")
        batch: list[str] = []
        for n in range(decoys):
            batch.append(DECOY_KINDS[n % len(DECOY_KINDS)].format(s=f"app_{n % SCHEMAS}", n=n))
            if len(batch) == 200 or n == decoys - 1:
                conn.execute("BEGIN; " + "; ".join(batch) + "; COMMIT")
                batch = []
        conn.execute(SMALL_QUEUES)
        conn.execute(BIG_QUEUE.replace("%(rows)s", str(int(big_rows))))
        conn.execute("VACUUM ANALYZE")
        count = conn.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
        ).fetchone()[0]
    print(f"built {DB}: {count} tables, {BIG} {big_rows:,} rows, in "
          f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    return target


def discover_process(dsn: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "discover", "--json", "--dsn", dsn],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, json.loads(done.stdout)


def discover_in_process(dsn: str) -> float:
    with db.connect_monitor(dsn) as conn:
        started = time.perf_counter()
        discover.find_queues(conn)
        return time.perf_counter() - started


def poll_side_by_side(dsn: str, toml: str, runs: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(toml)
    with db.connect_monitor(dsn, db.monitor_timeout_ms(1.0)) as mon:
        understood = config.validate(mon, config.build_spec(table=BIG))
        described = config.validate(mon, config.load_file(f.name))
        monitors = {"understood": Monitor(understood, 1.0), "described": Monitor(described, 1.0)}
        spent: dict[str, list[float]] = {k: [] for k in monitors}
        counts = {}
        for name, m in monitors.items():  # warm: plans made, statements prepared
            for _ in range(2):
                counts[name] = every_section_due(m).poll(mon).counts
        for i in range(runs):
            order = list(monitors) if i % 2 == 0 else list(reversed(monitors))
            for name in order:
                took, snap = db_time(lambda m=monitors[name]: every_section_due(m).poll(mon))
                spent[name].append(took)
                counts[name] = snap.counts
    ms = {k: statistics.median(v) * 1000 for k, v in spent.items()}
    print(f"poll of {BIG} ({runs} runs each, alternately, median database time):")
    for name in monitors:
        print(f"  {name:<11} {ms[name]:8.1f} ms   counts {counts[name]}")
    print(f"  ratio understood/described: {ms['understood'] / ms['described']:.2f} "
          f"(target 1.0); same counts: {counts['understood'] == counts['described']}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn")
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--big-rows", type=float, default=5_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--reuse", action="store_true", help="keep and reuse the database")
    args = parser.parse_args()
    with server(args.dsn) as dsn:
        if args.reuse and _exists(dsn):
            target = psycopg.conninfo.make_conninfo(dsn, dbname=DB)
        else:
            target = build(dsn, args.tables, args.big_rows)
        discover_process(target)  # the catalog and statistics read once into the cache
        walls, found = [], {}
        for _ in range(args.runs):
            took, found = discover_process(target)
            walls.append(took)
        queues = {q["table"]: q for q in found["queues"]}
        wall = statistics.median(walls)
        print(f"discover --json, a fresh process ({args.runs} runs): median {wall:.2f} s, "
              f"max {max(walls):.2f} s; target 2 s: {'met' if wall < 2 else 'MISSED'} "
              f"(ratio {wall / 2:.2f} of the target)", flush=True)  # fmt: skip
        inner = statistics.median(discover_in_process(target) for _ in range(args.runs))
        print(f"  discovery's reads alone, in this process: median {inner:.2f} s")
        for name in (*QUEUES, BIG):
            q = queues.get(name)
            print(f"  {name:<24} {q['confidence'] if q else 'NOT FOUND'}")
        above_low = [t for t, q in queues.items() if t not in (*QUEUES, BIG)
                     and q["confidence"] != "low"]  # fmt: skip
        print(f"  other tables listed above low: {len(above_low)} {above_low[:5]}")
        if BIG in queues:
            poll_side_by_side(target, queues[BIG]["pin_toml"], args.runs * 2)
        if not args.reuse:
            with psycopg.connect(dsn, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    return 0


def _exists(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as admin:
        return bool(admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB,)).fetchone())


if __name__ == "__main__":
    sys.exit(main())
