"""pgmq's own Python client (`pgmq` 1.1.4 on PyPI) as the consumers and producers of
tests/test_adapter_pgmq.py, run in a venv of its own: `python pgmq_app.py COMMAND ...`.

DSN from $PGMQ_DSN. A consumer reads one message at a time with a visibility timeout of
$PGMQ_VT seconds (pgmq.read), records what it does in side_effects(job_id, task, attempt,
event), and deletes the message when done (pgmq.delete). A message it has read more than
$PGMQ_MAX_READS times is one it gives up on, as pgmq's consumers commonly do: archived
(pgmq.archive), never run. A message {"seconds": S} runs S seconds; with "extend" the
consumer keeps its lease alive meanwhile (pgmq.set_vt every third of the timeout); with
"fail" it raises, leaving the message to be read again once its vt passes; with "once" it
is long on its first run only (a crashed run's retry is quick).

    schema                      (nothing: the test creates pgmq's schema from its script)
    create QUEUE                pgmq.create
    send QUEUE JSON [DELAY]     pgmq.send; prints the msg_id
    work QUEUE NAME             consume until killed
    metrics QUEUE               pgmq.metrics, as JSON
"""

from __future__ import annotations

import json
import os
import sys
import time

import psycopg
from pgmq import PGMQueue

DSN = os.environ.get("PGMQ_DSN", "")
VT = int(os.environ.get("PGMQ_VT", "30"))
MAX_READS = int(os.environ.get("PGMQ_MAX_READS", "3"))


def client() -> PGMQueue:
    return PGMQueue(conn_string=DSN, init_extension=False, pool_size=2, vt=VT)


def record(job_id: int, task: str, attempt: int, event: str) -> None:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        conn.execute(
            "INSERT INTO side_effects (job_id, task, attempt, event) VALUES (%s, %s, %s, %s)",
            (job_id, task, attempt, event),
        )


def runs(job_id: int) -> list:
    with psycopg.connect(DSN, autocommit=True, application_name="side-effect") as conn:
        return conn.execute(
            "SELECT 1 FROM side_effects WHERE job_id = %s AND event = 'started'", (job_id,)
        ).fetchall()


def work(queue: str, name: str) -> None:
    q = client()
    while True:
        msg = q.read(queue, vt=VT)
        if msg is None:
            time.sleep(0.2)
            continue
        if msg.read_ct > MAX_READS:  # read too often: the consumer gives up on it
            q.archive(queue, msg.msg_id)
            record(msg.msg_id, name, msg.read_ct, "gave up")
            continue
        body = msg.message or {}
        rerun = bool(runs(msg.msg_id))  # "once": long on its first run only
        record(msg.msg_id, name, msg.read_ct, "started")
        seconds = 0.0 if body.get("once") and rerun else float(body.get("seconds", 0))
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, VT / 3))
            if body.get("extend"):  # a long job keeps its lease: pgmq.set_vt
                q.set_vt(queue, msg.msg_id, VT)
        if body.get("fail"):
            record(msg.msg_id, name, msg.read_ct, "raised")
            continue  # not deleted: pgmq hands it out again once its vt passes
        q.delete(queue, msg.msg_id)
        record(msg.msg_id, name, msg.read_ct, "done")


def main(argv: list[str]) -> None:
    command, *rest = argv
    if command == "create":
        client().create_queue(rest[0])
    elif command == "send":
        delay = int(rest[2]) if len(rest) > 2 else None
        print(client().send(rest[0], json.loads(rest[1]), delay=delay))
    elif command == "work":
        work(rest[0], rest[1])
    elif command == "metrics":
        m = client().metrics(rest[0])
        print(json.dumps({"queue_length": m.queue_length, "visible": m.queue_visible_length}))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main(sys.argv[1:])
