"""DBOS driven by tests/test_adapter_dbos.py: its real workers and its client.

    python dbos_app.py work EXECUTOR QUEUE[,QUEUE]   a DBOS process dequeuing from QUEUEs
    python dbos_app.py migrate                       DBOS's own migrations of its system schema
    python dbos_app.py enqueue JSON                  {label: {workflow, queue, args, delay}} -> ids
    python dbos_app.py view                          {workflow id: status} by list_workflows

DSN from $DBOS_DSN (a postgresql:// URL). A worker names its sessions 'dbos:' + its executor
id (the preset's liveness opt-in). Workflows write side_effects(job_id, event) outside any
step, so a recovered workflow's rerun records again: the proof of what ran how many times.
"""

import json
import os
import sys
import time

import psycopg
from dbos import DBOS, DBOSClient, DBOSConfig

URL = os.environ["DBOS_DSN"]
APP = "queuetop-test"


def record(event: str) -> None:
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO side_effects (job_id, event) VALUES (%s, %s)", (DBOS.workflow_id, event)
        )


def ran_before() -> bool:
    with psycopg.connect(URL, autocommit=True) as conn:
        return bool(
            conn.execute(
                "SELECT 1 FROM side_effects WHERE job_id = %s AND event = 'started'",
                (DBOS.workflow_id,),
            ).fetchone()
        )


def start(executor: str | None = None) -> None:
    config: DBOSConfig = {"name": APP, "system_database_url": URL}
    if executor:
        config["executor_id"] = executor
        config["db_engine_kwargs"] = {"connect_args": {"application_name": f"dbos:{executor}"}}
    DBOS(config=config)


@DBOS.workflow()
def quick() -> None:
    record("done")


@DBOS.workflow()
def long(seconds: float) -> None:
    """Sleeps on its first run only, so that a recovered rerun is quick."""
    first = not ran_before()
    record("started")
    if first:
        time.sleep(seconds)
    record("done")


@DBOS.workflow()
def boom() -> None:
    record("raised")
    raise RuntimeError("boom")


def client() -> DBOSClient:
    return DBOSClient(system_database_url=URL, application_name=APP)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "work":
        start(sys.argv[2])
        queues = sys.argv[3].split(",")
        DBOS.listen_queues(queues)
        DBOS.launch()
        for name in queues:  # a queue is declared on a launched DBOS
            DBOS.register_queue(name, polling_interval_sec=0.2)
        print("working", sys.argv[2], flush=True)
        while True:
            time.sleep(1)
    elif command == "migrate":
        start()
        DBOS.launch()
        DBOS.destroy()
        print("{}")
    elif command == "enqueue":
        c, ids = client(), {}
        for label, job in json.loads(sys.argv[2]).items():
            options = {"workflow_name": job["workflow"], "queue_name": job["queue"]}
            if job.get("delay"):
                options["delay_seconds"] = job["delay"]
            ids[label] = c.enqueue(options, *job.get("args", [])).get_workflow_id()
        print(json.dumps(ids))
    elif command == "view":
        print(json.dumps({w.workflow_id: w.status for w in client().list_workflows()}))
