"""Hangfire on PostgreSQL without .NET: the steps its client, workers and servers take,
each made of Hangfire.PostgreSql's own statements (tests/library_schemas/hangfire_worker.sql,
copied from its source; hangfire_1_19_worker.sql where 1.19.12's differ) in the order
Hangfire's state machine runs them (BackgroundJobStateChanger, CoreStateMachine, the state
handlers and the global filters AutomaticRetry and StatisticsHistory, Worker.Execute).

The schema is its own install scripts (hangfire_install.sql), run as
PostgreSqlObjectsInstaller runs them: each script, then the schema row moved up.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import psycopg

SCHEMAS = Path(__file__).resolve().parent.parent / "library_schemas"
INVISIBILITY_TIMEOUT_S = 1800  # PostgreSqlStorageOptions.InvisibilityTimeout (30 minutes)
SERVER_TIMEOUT_MS = 300_000  # ServerWatchdog.DefaultServerTimeout (5 minutes)
# the library release whose statements run on each schema version the tests build
RELEASES = {23: "1.21.1", 19: "1.19.12"}


def _chunks(path: Path) -> dict[str, str]:
    found = {}
    for chunk in path.read_text().split("-- ==== ")[1:]:
        head, _, body = chunk.partition("\n")
        found[head.split(" ")[0]] = body.strip()
    return found


def statements(release: str) -> dict[str, str]:
    """The library's statements of `release` by name, as its source has them."""
    found = _chunks(SCHEMAS / "hangfire_worker.sql")
    if release == "1.19.12":
        found |= _chunks(SCHEMAS / "hangfire_1_19_worker.sql")
    return found


def install(conn: psycopg.Connection, upto: int) -> None:
    """Install.v3.sql to Install.v<upto>.sql, as PostgreSqlObjectsInstaller.Install runs them."""
    previous = 1
    for version, script in _chunks(SCHEMAS / "hangfire_install.sql").items():
        number = int(version.removeprefix("v"))
        if number > upto:
            break
        with conn.transaction():
            conn.execute(script.encode())
            conn.execute(
                'UPDATE "hangfire"."schema" SET "version" = %s WHERE "version" = %s',
                (number, previous),
            )
        previous = number


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def timestamp(at: datetime, iso: bool = False) -> str:
    """JobHelper.SerializeDateTime: Unix milliseconds at CompatibilityLevel 1.7 and later,
    else the round-trip ("O") form."""
    if iso:
        return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f0Z")
    return str(int(at.timestamp() * 1000))


@dataclass(frozen=True)
class Fetched:
    """What the fetch returns (PostgreSqlJobQueue.FetchedJob)."""

    id: int
    job_id: int
    queue: str
    fetched_at: datetime


class Hangfire:
    """One storage connection: the library's statements by name, run as Hangfire runs them."""

    def __init__(self, conn: psycopg.Connection, release: str = "1.21.1"):
        self.conn, self.release = conn, release
        self.sql = statements(release)

    def run(self, name: str, numbers: dict[str, int] | None = None, **params: object):
        """Statement `name`, the numbers its C# formats into the text filled in, its
        @Name parameters passed as psycopg's."""
        text = self.sql[name]
        for key, value in (numbers or {}).items():
            text = text.replace("{" + key + "}", str(value))
        text = re.sub(r"@(\w+)", r"%(\1)s", text)
        return self.conn.execute(text, params)

    # -- the state machine: SetJobState, then the new state's handler, then Persist/Expire
    def _state(self, job: int, name: str, data: dict, reason: str | None = None) -> None:
        self.run(
            "set_job_state", JobId=job, Id=job, Name=name, Reason=reason,
            CreatedAt=utcnow(), Data=json.dumps(data),
        )  # fmt: skip

    def _traversed(self, job: int, name: str, data: dict, reason: str | None = None) -> None:
        self.run(
            "add_job_state", JobId=job, Name=name, Reason=reason, CreatedAt=utcnow(),
            Data=json.dumps(data),
        )  # fmt: skip

    def create(self, queue: str | None = "default", method: str = "Send") -> int:
        """BackgroundJobClient.Create: the job, then its state (Enqueued in `queue`; with
        no queue, the caller's schedule or await_parent gives it its first state)."""
        invocation = {
            "Type": "App.Mailer, App", "Method": method,
            "ParameterTypes": '["System.String"]', "Arguments": '["\\"hello\\""]',
        }  # fmt: skip
        now = utcnow()
        with self.conn.transaction():
            job = self.run(
                "create_job", InvocationData=json.dumps(invocation),
                Arguments='["\\"hello\\""]', CreatedAt=now, ExpireAt=now.replace(year=now.year + 1),
            ).fetchone()[0]  # fmt: skip
            self.run("set_job_parameter", JobId=job, Name="CurrentCulture", Value='"en-US"')
        if queue:
            self.enqueue(job, queue)
        return job

    def enqueue(self, job: int, queue: str = "default", reason: str | None = None) -> None:
        with self.conn.transaction():
            self._state(
                job, "Enqueued", {"EnqueuedAt": timestamp(utcnow()), "Queue": queue}, reason
            )
            self.run("enqueue", JobId=job, Queue=queue)
            self.run("persist_job", Id=job)

    def schedule(
        self, job: int, seconds: int, reason: str | None = None, iso: bool = False
    ) -> None:
        at = utcnow()
        due = at.timestamp() + seconds
        data = {"EnqueueAt": timestamp(datetime.fromtimestamp(due, timezone.utc), iso),
                "ScheduledAt": timestamp(at, iso)}  # fmt: skip
        with self.conn.transaction():
            self._state(job, "Scheduled", data, reason)
            self.run("add_to_set", Key="schedule", Value=str(job), Score=due)
            if reason and reason.lower().startswith("retry attempt"):  # AutomaticRetry
                self.run("add_to_set", Key="retries", Value=str(job), Score=0.0)
            self.run("persist_job", Id=job)

    def await_parent(self, job: int, parent: int) -> None:
        with self.conn.transaction():
            self._state(job, "Awaiting", {"ParentId": str(parent), "NextState": "{}"})
            self.run("add_to_set", Key="awaiting", Value=str(job), Score=utcnow().timestamp())
            self.run("persist_job", Id=job)

    def delete(self, job: int) -> None:
        """The dashboard's delete: Deleted (final, so it expires); a Scheduled job leaves
        the schedule set (the Scheduled handler's unapply)."""
        (old,) = self.conn.execute(
            'SELECT statename FROM "hangfire"."job" WHERE id = %s', (job,)
        ).fetchone()
        with self.conn.transaction():
            if old == "Scheduled":
                self.run("remove_from_set", Key="schedule", Value=str(job))
            self._state(
                job, "Deleted", {"DeletedAt": timestamp(utcnow())}, "Triggered via Dashboard UI"
            )
            self.run("increment_counter", Key="stats:deleted", Value=1)
            self.run("expire_job", {"expireInSeconds": 86400}, Id=job)

    # -- a worker (Worker.Execute)
    def fetch(
        self, queues: tuple[str, ...] = ("default",), timeout_s: int = INVISIBILITY_TIMEOUT_S
    ):
        """The fetch: one pass of 1.21.1's; 1.19.12's two passes, new jobs first."""
        numbers = {"timeoutSeconds": -timeout_s}
        passes = ("fetch", "fetch_timed_out") if self.release == "1.19.12" else ("fetch",)
        for name in passes:
            row = self.run(name, numbers, Queues=list(queues)).fetchone()
            if row:
                return Fetched(*row)
        return None

    def recover(self, queues: tuple[str, ...] = ("default",)):
        """1.19.12's own recovery pass alone (1.21.1 folds it into its one fetch)."""
        numbers = {"timeoutSeconds": -INVISIBILITY_TIMEOUT_S}
        return self.run("fetch_timed_out", numbers, Queues=list(queues)).fetchone()

    def process(self, fetched: Fetched, server: str, worker: str = "w-1") -> None:
        data = {"StartedAt": timestamp(utcnow()), "ServerId": server, "WorkerId": worker}
        with self.conn.transaction():
            self._state(fetched.job_id, "Processing", data)
            self.run("persist_job", Id=fetched.job_id)

    def remove_from_queue(self, fetched: Fetched) -> int:
        return self.run("remove_from_queue", Id=fetched.id, FetchedAt=fetched.fetched_at).rowcount

    def succeed(self, fetched: Fetched) -> None:
        data = {"SucceededAt": timestamp(utcnow()), "PerformanceDuration": "12", "Latency": "3"}
        with self.conn.transaction():
            self._state(fetched.job_id, "Succeeded", data)
            self.run("increment_counter", Key="stats:succeeded", Value=1)
            self.run("expire_job", {"expireInSeconds": 86400}, Id=fetched.job_id)
        self.remove_from_queue(fetched)

    def fail(self, fetched: Fetched, attempt: int | None, attempts: int = 10) -> None:
        """The worker's FailedState: AutomaticRetry schedules a retry while `attempt` is
        within `attempts` (the Failed candidate a traversed state), else it stays Failed."""
        job = fetched.job_id
        error = "System.InvalidOperationException"
        failed = {
            "FailedAt": timestamp(utcnow()), "ExceptionType": error,
            "ExceptionMessage": "boom", "ExceptionDetails": f"{error}: boom", "ServerId": "srv",
        }  # fmt: skip
        reason = "An exception occurred during processing of a background job."
        with self.conn.transaction():  # one state change (savepoints inside)
            if attempt is not None and attempt <= attempts:
                self.run("set_job_parameter", JobId=job, Name="RetryCount", Value=str(attempt))
                self._traversed(job, "Failed", failed, reason)
                self.schedule(job, 60, f"Retry attempt {attempt} of {attempts}: boom")
            else:
                self._state(job, "Failed", failed, reason)
                self.run("persist_job", Id=job)
        self.remove_from_queue(fetched)

    # -- servers
    def announce(self, server: str) -> None:
        data = {
            "WorkerCount": 20,
            "Queues": ["default", "critical"],
            "StartedAt": utcnow().isoformat(),
        }
        self.run("announce_server", Id=server, Data=json.dumps(data))

    def watchdog(self) -> int:
        """ServerWatchdog: servers silent past ServerTimeout are removed."""
        numbers = {"timeOutMilliseconds": SERVER_TIMEOUT_MS}
        return self.run("remove_timed_out_servers", numbers).rowcount
