-- Hangfire.PostgreSql 1.19.12's own statements where they differ from 1.21.1's
-- (hangfire-postgres/Hangfire.PostgreSql, commit 7c11f7e, src/Hangfire.PostgreSql/), for
-- SchemaName "hangfire": its text columns took the JSON as text, its fetch ran two passes
-- (new jobs first, then its recovery of claims older than InvisibilityTimeout), and its
-- fetched job's RemoveFromQueue and Requeue matched the row id alone.
-- ==== create_job (PostgreSqlConnection.CreateExpiredJob)
INSERT INTO "hangfire"."job" ("invocationdata", "arguments", "createdat", "expireat")
VALUES (@InvocationData, @Arguments, @CreatedAt, @ExpireAt)
RETURNING "id";
-- ==== set_job_state (PostgreSqlWriteOnlyTransaction.SetJobState)
WITH "s" AS (
    INSERT INTO "hangfire"."state" ("jobid", "name", "reason", "createdat", "data")
    VALUES (@JobId, @Name, @Reason, @CreatedAt, @Data) RETURNING "id"
)
UPDATE "hangfire"."job" "j"
SET "stateid" = s."id", "statename" = @Name
FROM "s"
WHERE "j"."id" = @Id;
-- ==== add_job_state (PostgreSqlWriteOnlyTransaction.AddJobState: a traversed state)
INSERT INTO "hangfire"."state" ("jobid", "name", "reason", "createdat", "data")
VALUES (@JobId, @Name, @Reason, @CreatedAt, @Data);
-- ==== fetch (PostgreSqlJobQueue.Dequeue_Transaction's first pass, fetchConditions[0]: a new job)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NOW()
WHERE "id" = (
  SELECT "id"
  FROM "hangfire"."jobqueue"
  WHERE "queue" = ANY (@Queues)
  AND "fetchedat" IS NULL
  ORDER BY "queue", "fetchedat", "jobid"
  FOR UPDATE SKIP LOCKED
  LIMIT 1
)
RETURNING "id" AS "Id", "jobid" AS "JobId", "queue" AS "Queue", "fetchedat" AS "FetchedAt";
-- ==== fetch_timed_out (Dequeue_Transaction's second pass, fetchConditions[1]: its recovery of a claim older than InvisibilityTimeout)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NOW()
WHERE "id" = (
  SELECT "id"
  FROM "hangfire"."jobqueue"
  WHERE "queue" = ANY (@Queues)
  AND "fetchedat" < NOW() + INTERVAL '{timeoutSeconds} SECONDS'
  ORDER BY "queue", "fetchedat", "jobid"
  FOR UPDATE SKIP LOCKED
  LIMIT 1
)
RETURNING "id" AS "Id", "jobid" AS "JobId", "queue" AS "Queue", "fetchedat" AS "FetchedAt";
-- ==== remove_from_queue (PostgreSqlFetchedJob.RemoveFromQueue)
DELETE FROM "hangfire"."jobqueue" WHERE "id" = @Id;
-- ==== requeue_fetched (PostgreSqlFetchedJob.Requeue)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NULL
WHERE "id" = @Id;
-- ==== announce_server (PostgreSqlConnection.AnnounceServer)
WITH "inputvalues" AS (
  SELECT @Id "id", @Data "data", NOW() "lastheartbeat"
), "updatedrows" AS (
  UPDATE "hangfire"."server" "updatetarget"
  SET "data" = "inputvalues"."data", "lastheartbeat" = "inputvalues"."lastheartbeat"
  FROM "inputvalues"
  WHERE "updatetarget"."id" = "inputvalues"."id"
  RETURNING "updatetarget"."id"
)
INSERT INTO "hangfire"."server"("id", "data", "lastheartbeat")
SELECT "id", "data", "lastheartbeat"
FROM "inputvalues" "insertvalues"
WHERE NOT EXISTS (
  SELECT 1
  FROM "updatedrows"
  WHERE "updatedrows"."id" = "insertvalues"."id"
);
