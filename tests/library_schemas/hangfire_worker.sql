-- Hangfire.PostgreSql 1.21.1's own statements (hangfire-postgres/Hangfire.PostgreSql, commit
-- e0a4001, src/Hangfire.PostgreSql/), as its C# interpolates them for SchemaName "hangfire":
-- Dapper's @Name parameters as they are; {timeoutSeconds}, {expireInSeconds} and
-- {timeOutMilliseconds} stand for the numbers it formats into the text.
-- ==== create_job (PostgreSqlConnection.CreateExpiredJob)
INSERT INTO "hangfire"."job" ("invocationdata", "arguments", "createdat", "expireat")
VALUES (@InvocationData::jsonb, @Arguments::jsonb, @CreatedAt, @ExpireAt)
RETURNING "id";
-- ==== set_job_parameter (PostgreSqlConnection.SetJobParameter)
WITH "inputvalues" AS (
  SELECT @JobId "jobid", @Name "name", @Value "value"
), "updatedrows" AS (
  UPDATE "hangfire"."jobparameter" "updatetarget"
  SET "value" = "inputvalues"."value"
  FROM "inputvalues"
  WHERE "updatetarget"."jobid" = "inputvalues"."jobid"
  AND "updatetarget"."name" = "inputvalues"."name"
  RETURNING "updatetarget"."jobid", "updatetarget"."name"
)
INSERT INTO "hangfire"."jobparameter"("jobid", "name", "value")
SELECT "jobid", "name", "value"
FROM "inputvalues" "insertvalues"
WHERE NOT EXISTS (
  SELECT 1
  FROM "updatedrows"
  WHERE "updatedrows"."jobid" = "insertvalues"."jobid"
  AND "updatedrows"."name" = "insertvalues"."name"
);
-- ==== set_job_state (PostgreSqlWriteOnlyTransaction.SetJobState)
WITH "s" AS (
    INSERT INTO "hangfire"."state" ("jobid", "name", "reason", "createdat", "data")
    VALUES (@JobId, @Name, @Reason, @CreatedAt, @Data::jsonb) RETURNING "id"
)
UPDATE "hangfire"."job" "j"
SET "stateid" = s."id", "statename" = @Name
FROM "s"
WHERE "j"."id" = @Id;
-- ==== add_job_state (PostgreSqlWriteOnlyTransaction.AddJobState: a traversed state)
INSERT INTO "hangfire"."state" ("jobid", "name", "reason", "createdat", "data")
VALUES (@JobId, @Name, @Reason, @CreatedAt, @Data::jsonb);
-- ==== expire_job (PostgreSqlWriteOnlyTransaction.ExpireJob)
UPDATE "hangfire"."job"
SET "expireat" = NOW() + INTERVAL '{expireInSeconds} SECONDS'
WHERE "id" = @Id;
-- ==== persist_job (PostgreSqlWriteOnlyTransaction.PersistJob)
UPDATE "hangfire"."job"
SET "expireat" = NULL
WHERE "id" = @Id;
-- ==== enqueue (PostgreSqlJobQueue.Enqueue, which AddToQueue runs)
INSERT INTO "hangfire"."jobqueue" ("jobid", "queue")
VALUES (@JobId, @Queue);
-- ==== add_to_set (PostgreSqlWriteOnlyTransaction.AddToSet)
INSERT INTO "hangfire"."set"("key", "value", "score")
VALUES(@Key, @Value, @Score)
ON CONFLICT ("key", "value")
DO UPDATE SET "score" = EXCLUDED."score"
-- ==== remove_from_set (PostgreSqlWriteOnlyTransaction.RemoveFromSet)
DELETE FROM "hangfire"."set"
WHERE "key" = @Key
AND "value" = @Value;
-- ==== increment_counter (PostgreSqlWriteOnlyTransaction.IncrementCounter without expiry)
INSERT INTO "hangfire"."counter" ("key", "value")
VALUES (@Key, @Value);
-- ==== fetch (PostgreSqlJobQueue.Dequeue_Transaction, UseNativeDatabaseTransactions, the default): the next job, its own recovery included (a claim older than InvisibilityTimeout is fetched again)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NOW()
WHERE "id" = (
  SELECT "id"
  FROM "hangfire"."jobqueue"
  WHERE "queue" = ANY (@Queues)
  AND ("fetchedat" IS NULL OR "fetchedat" < NOW() + INTERVAL '{timeoutSeconds} SECONDS')
  ORDER BY "fetchedat" NULLS FIRST, "queue", "jobid"
  FOR UPDATE SKIP LOCKED
  LIMIT 1
)
RETURNING "id" AS "Id", "jobid" AS "JobId", "queue" AS "Queue", "fetchedat" AS "FetchedAt";
-- ==== fetch_candidate (PostgreSqlJobQueue.Dequeue_UpdateCount's jobToFetchSql: the row its fetch would take, with its fetchedat before the fetch)
SELECT "id" AS "Id", "jobid" AS "JobId", "queue" AS "Queue", "fetchedat" AS "FetchedAt", "updatecount" AS "UpdateCount"
FROM "hangfire"."jobqueue"
WHERE "queue" = ANY (@Queues)
AND ("fetchedat" IS NULL OR "fetchedat" < NOW() + INTERVAL '{timeoutSeconds} SECONDS')
ORDER BY "fetchedat" NULLS FIRST, "queue", "jobid"
LIMIT 1;
-- ==== remove_from_queue (PostgreSqlFetchedJob.RemoveFromQueue)
DELETE FROM "hangfire"."jobqueue" WHERE "id" = @Id AND "fetchedat" = @FetchedAt;
-- ==== requeue_fetched (PostgreSqlFetchedJob.Requeue: a stopping worker gives its job back)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NULL
WHERE "id" = @Id AND "fetchedat" = @FetchedAt;
-- ==== keep_alive (PostgreSqlFetchedJob.ExecuteKeepAliveQueryIfRequired, UseSlidingInvisibilityTimeout)
UPDATE "hangfire"."jobqueue"
SET "fetchedat" = NOW()
WHERE "id" = @id AND "fetchedat" = @fetchedAt
RETURNING "fetchedat" AS "FetchedAt";
-- ==== announce_server (PostgreSqlConnection.AnnounceServer)
WITH "inputvalues" AS (
  SELECT @Id "id", @Data::jsonb "data", NOW() "lastheartbeat"
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
-- ==== heartbeat (PostgreSqlConnection.Heartbeat)
UPDATE "hangfire"."server"
SET "lastheartbeat" = NOW()
WHERE "id" = @Id;
-- ==== remove_timed_out_servers (PostgreSqlConnection.RemoveTimedOutServers, run by ServerWatchdog with ServerTimeout)
DELETE FROM "hangfire"."server"
WHERE "lastheartbeat" < (NOW() - INTERVAL '{timeOutMilliseconds} MILLISECONDS');
-- ==== try_lock (PostgreSqlDistributedLock TransactionLockHandler.TryLock: BackgroundJobStateChanger's job:<id>:state-lock)
INSERT INTO "hangfire"."lock"("resource", "acquired")
SELECT @Resource, @Acquired
WHERE NOT EXISTS (
    SELECT 1 FROM "hangfire"."lock"
    WHERE "resource" = @Resource
)
ON CONFLICT DO NOTHING;
-- ==== release_lock (PostgreSqlDistributedLock LockHandler.TryRemoveLock, onlyExpired false: Timeout is DateTime.MaxValue)
DELETE FROM "hangfire"."lock" WHERE "resource" = @Resource AND "acquired" < @Timeout
-- ==== statistics (PostgreSqlMonitoringApi.GetStatistics: its count per state)
SELECT "statename" "State", COUNT("id") "Count"
FROM "hangfire"."job"
WHERE "statename" IS NOT NULL
GROUP BY "statename";
-- ==== count_by_state_name (PostgreSqlMonitoringApi.GetNumberOfJobsByStateName: ScheduledCount, FailedCount, ProcessingCount, SucceededListCount, DeletedListCount)
SELECT COUNT("id") FROM "hangfire"."job" WHERE "statename" = @StateName;
-- ==== enqueued_and_fetched_count (PostgreSqlJobQueueMonitoringApi.GetEnqueuedAndFetchedCount: a queue's Length and Fetched)
SELECT (
    SELECT COUNT(*)
    FROM "hangfire"."jobqueue"
    WHERE "fetchedat" IS NULL
    AND "queue" = @Queue
) "EnqueuedCount",
(
  SELECT COUNT(*)
  FROM "hangfire"."jobqueue"
  WHERE "fetchedat" IS NOT NULL
  AND "queue" = @Queue
) "FetchedCount";
-- ==== get_jobs (PostgreSqlMonitoringApi.GetJobs: the FailedJobs, ProcessingJobs ... pages)
SELECT "j"."id" "Id", "j"."invocationdata" "InvocationData", "j"."arguments" "Arguments", "j"."createdat" "CreatedAt",
  "j"."expireat" "ExpireAt", NULL "FetchedAt", "j"."statename" "StateName", "s"."reason" "StateReason", "s"."data" "StateData"
FROM "hangfire"."job" "j"
LEFT JOIN "hangfire"."state" "s" ON "j"."stateid" = "s"."id"
WHERE "j"."statename" = @StateName
ORDER BY "j"."id" DESC
LIMIT @Limit OFFSET @Offset;
-- ==== timeline_stats (PostgreSqlMonitoringApi.GetTimelineStats: the dashboard's succeeded and failed graphs)
WITH "aggregated_counters" AS (
  SELECT "key", "value"
  FROM "hangfire"."aggregatedcounter"
  WHERE "key" = ANY(@Keys)
), "regular_counters" AS (
  SELECT "key", "value"
  FROM "hangfire"."counter"
  WHERE "key" = ANY(@Keys)
), "all_counters" AS (
  SELECT * FROM "aggregated_counters"
  UNION ALL
  SELECT * FROM "regular_counters"
)
SELECT "key", COALESCE(SUM("value"), 0) AS "count"
FROM "all_counters"
GROUP BY "key"
