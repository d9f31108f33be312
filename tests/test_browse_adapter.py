"""The job browser on a library's table through its adapter (pgqueuer): derived columns,
its group column, the scheduled role, and a page's observation acted on in its terms."""

from __future__ import annotations

from datetime import timedelta

from pgqueuer import Queries
from test_adapter_pgqueuer import library, pgq_dsn, rows  # noqa: F401 (the fixture)

from dashboard import config, db
from dashboard.actions import TableAudit, requeue
from dashboard.browse import QUEUE, BrowseQuery, PageReader, read_row


def test_pages_of_pgqueuer_jobs_through_its_adapter(pgq_dsn):  # noqa: F811
    async def enqueue(queries: Queries) -> list[int]:
        ids = await queries.enqueue(
            ["mail", "mail", "sms", "mail"], [b"to:a", b"to:b", b"\x00\x1b[2J", b"to:c"], [0] * 4
        )
        await queries.enqueue("mail", b"later", execute_after=timedelta(hours=1))
        return list(ids)

    ids = library(pgq_dsn, enqueue)
    with db.connect_monitor(pgq_dsn) as conn:
        spec = config.validate(conn, config.load_preset("pgqueuer"))
    rows(pgq_dsn, "UPDATE pgqueuer SET status = 'failed' WHERE id = %s RETURNING id", ids[3])
    reader = PageReader(spec)
    with db.connect_monitor(pgq_dsn) as conn:
        ready = reader.read(conn, BrowseQuery(role="ready", newest_first=False))
        mail = reader.read(conn, BrowseQuery(role="ready", group="mail", newest_first=False))
        later = reader.read(conn, BrowseQuery(role="scheduled"))
        failed = reader.read(conn, BrowseQuery(role="dead"))  # held for a person: dead
        found = reader.read(conn, BrowseQuery(role="ready", text="MAIL"))
        payload = {f.name: f for f in read_row(conn, reader, str(ids[2]), QUEUE).fields}
    assert [r.id for r in ready.rows] == [str(i) for i in ids[:3]]
    assert [(r.id, r.group) for r in mail.rows] == [(str(ids[0]), "mail"), (str(ids[1]), "mail")]
    assert len(later.rows) == 1 and later.rows[0].group == "mail"
    [job] = failed.rows
    assert (job.id, job.status, job.requeue_refusal) == (str(ids[3]), "failed", None)
    assert [r.id for r in found.rows] == [str(ids[1]), str(ids[0])]  # the group matched
    assert payload["payload"].shown() == "\\x001b5b324a"  # bytea as to_jsonb prints it
    with db.connect_action(pgq_dsn) as action:
        result = requeue(action, spec, [job.observed()], audit=TableAudit(), reason="browser")
    assert result.changed == (str(ids[3]),)
    assert rows(pgq_dsn, "SELECT status::text FROM pgqueuer WHERE id = %s", ids[3]) == [("queued",)]
