-- purpose: requeue db-scheduler executions still as observed (picked, picked_by, version) and, unless forced, past the missed-heartbeats limit, writing what db-scheduler writes itself (ExecutionUpdate's columns, its version + 1): a picked execution as ReviveDeadExecution reschedules it (due now, unpicked, last_heartbeat cleared, a failure counted: consecutive_failures + 1, last_failure now, last_success kept), a failing one as SchedulerClient.reschedule(instance, now) (due now, last_success, last_failure cleared, consecutive_failures 0)
UPDATE {table} AS t
SET execution_time = now(),
    picked = false,
    picked_by = NULL,
    last_success = CASE WHEN t.picked THEN t.last_success END,
    last_failure = CASE WHEN t.picked THEN now() END,
    consecutive_failures = CASE WHEN t.picked THEN coalesce(t.consecutive_failures, 0) + 1 ELSE 0 END,
    last_heartbeat = NULL,
    version = t.version + 1
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
