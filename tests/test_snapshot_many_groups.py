"""Text `snapshot` of a queue with 100,000 groups, one of them named with 10 KB: bounded.

Before, every line of the groups table was padded to the widest name: 1 GB of output. Now a
cell is cut (marked) at 80 characters and the text lists the 50 busiest groups with a count
of the rest; `--all-groups` lists them all, and `--json` always carries every group."""

from __future__ import annotations

import json
import subprocess
import sys

LONG = "g" * 10_000


def _queue(connect, tmp_path, groups: int) -> str:
    conn = connect(autocommit=True)
    conn.execute(
        "CREATE TABLE public.many (id bigserial PRIMARY KEY, status text NOT NULL, "
        "queue text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
    )
    conn.execute(
        "INSERT INTO public.many (status, queue) SELECT 'ready', 'queue-' || g "
        "FROM generate_series(1, %s) g",
        (groups - 1,),
    )
    conn.execute(
        "INSERT INTO public.many (status, queue) SELECT 'ready', %s FROM generate_series(1, 3)",
        (LONG,),
    )
    conn.execute("ANALYZE public.many")
    spec = tmp_path / "q.toml"
    spec.write_text(
        '[queue]\ntable = "public.many"\nid = "id"\nstatus = "status"\ncreated_at = "created_at"\n'
        'group = "queue"\n[queue.states]\nready = ["ready"]\nrunning = ["running"]\n'
        'done = ["done"]\n'
    )
    return str(spec)


def snapshot(dsn: str, spec: str, *more: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "dashboard", "snapshot", "--dsn", dsn, "--queue", spec, *more],
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode()


def test_100000_groups_and_a_10kb_name_stay_small(dsn, connect, tmp_path):
    spec = _queue(connect, tmp_path, 100_000)
    text = snapshot(dsn, spec)
    assert len(text.encode()) < 20_000_000
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("groups ("))
    assert lines[start] == "groups (100000, the 50 busiest shown)"
    rows = lines[start + 2 : start + 52]
    assert rows[0].lstrip().startswith("g" * 79 + "…")  # the busiest (3 jobs), cut and marked
    assert max(len(line) for line in lines) < 400
    assert lines[start + 52] == "  … and 99950 more groups (--all-groups lists them)"
    doc = json.loads(snapshot(dsn, spec, "--json"))
    assert len(doc["groups"]) == 100_000
    assert {g["name"] for g in doc["groups"]} >= {LONG, "queue-1"}


def test_all_groups_lists_every_one(dsn, connect, tmp_path):
    spec = _queue(connect, tmp_path, 60)
    lines = snapshot(dsn, spec, "--all-groups").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("groups ("))
    assert lines[start] == "groups (60)"
    names = {line.split()[0] for line in lines[start + 2 : start + 62]}
    assert len(names) == 60 and "queue-59" in names
