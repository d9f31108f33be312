"""The test's hand on dramatiq-pg (tests/test_adapter_dramatiq_pg.py): its broker, the actors
real `dramatiq` workers run, and a command line through the library's own API and SQL:

    dramatiq dramatiq_pg_app --processes 1 --threads 1 --queues Q   a real worker
    python dramatiq_pg_app.py init                 the schema, by dramatiq-pg's generate_init_sql
    python dramatiq_pg_app.py send JSON            {label: {actor, args, delay_ms}} -> {label: id}
    python dramatiq_pg_app.py stats                {state: n} by its own STATS statement (cli.py)
    python dramatiq_pg_app.py rows IDS             {id: [state, queue_name, lock key, held]}: the
                                                   row, its message's lock key by the library's own
                                                   message_lock, and whether pg_locks holds it

DSN (libpq key=value) from $DRAMATIQ_DSN. Each actor writes side_effects(message id, event)
on a connection of its own: the proof of what ran and how many times.
"""

import json
import os
import sys
import time

import dramatiq
import psycopg2
from dramatiq.message import Message
from dramatiq.middleware import CurrentMessage
from dramatiq_pg import PostgresBroker
from dramatiq_pg.broker import QUERIES as BROKER_QUERIES
from dramatiq_pg.broker import message_lock
from dramatiq_pg.cli import QUERIES as CLI_QUERIES
from dramatiq_pg.schema import generate_init_sql
from psycopg2.extensions import parse_dsn

DSN = os.environ["DRAMATIQ_DSN"]
broker = PostgresBroker(url=parse_dsn(DSN))
broker.add_middleware(CurrentMessage())
dramatiq.set_broker(broker)


def record(event: str) -> int:
    """Write one side effect of the current message; how many 'started' it has had."""
    message_id = CurrentMessage.get_current_message().message_id
    with psycopg2.connect(DSN) as conn, conn.cursor() as cur:
        cur.execute("INSERT INTO side_effects (job_id, event) VALUES (%s, %s)", (message_id, event))
        cur.execute(
            "SELECT count(*) FROM side_effects WHERE job_id = %s AND event = 'started'",
            (message_id,),
        )
        return cur.fetchone()[0]


@dramatiq.actor(queue_name="default", max_retries=0)
def quick():
    record("done")


@dramatiq.actor(queue_name="default", max_retries=0)
def boom():
    record("raised")
    raise RuntimeError("boom")


# one failure, then parked in the delay queue for an hour by the Retries middleware
@dramatiq.actor(queue_name="default", max_retries=3, min_backoff=3_600_000, max_backoff=3_600_000)
def flaky():
    record("raised")
    raise RuntimeError("flaky")


def _long(seconds: float) -> None:
    """Sleeps on its first run only, so a rerun of the same message is quick."""
    if record("started") == 1:
        time.sleep(seconds)
    record("done")


@dramatiq.actor(queue_name="victim", max_retries=0, time_limit=3_600_000)
def long_victim(seconds: float):
    _long(seconds)


@dramatiq.actor(queue_name="live", max_retries=0, time_limit=3_600_000)
def long_live(seconds: float):
    _long(seconds)


def _cursor():
    conn = psycopg2.connect(DSN)
    conn.autocommit = True
    return conn.cursor()


def main(command: str, arg: str | None) -> object:
    if command == "init":
        cur = _cursor()
        cur.execute(generate_init_sql())
        cur.execute("CREATE TABLE side_effects (job_id text NOT NULL, event text NOT NULL)")
        return "ok"
    if command == "send":
        ids = {}
        for label, job in json.loads(arg).items():
            actor = broker.get_actor(job["actor"])
            delay = job.get("delay_ms")
            message = actor.send_with_options(args=tuple(job.get("args", [])), delay=delay)
            ids[label] = message.message_id
        return ids
    if command == "stats":
        cur = _cursor()
        cur.execute(CLI_QUERIES.STATS)
        return {state: n for state, n in cur.fetchall()}
    cur = _cursor()
    found = {}
    for message_id in json.loads(arg):
        cur.execute(BROKER_QUERIES.FETCH_BY_ID, (message_id,))
        message = Message.decode(cur.fetchone()[0].encode())
        key = message_lock(message)
        cur.execute(
            "SELECT state::text, queue_name, EXISTS (SELECT 1 FROM pg_locks AS l "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            "AND ((l.classid::bigint << 32) | l.objid::bigint) = %s) "
            "FROM dramatiq.queue WHERE message_id = %s",
            (key, message_id),
        )
        state, queue, held = cur.fetchone()
        found[message_id] = [state, queue, str(key), held]
    return found


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
