-- purpose: good_job's state of a job (its dashboard's scopes, timestamps in UTC), with its running signal: the advisory lock a worker's session holds, or a skiplocked/hybrid lease in locked_by_id; a performed job nobody holds is interrupted (good_job claims it again at once)
CASE
    WHEN t.finished_at IS NOT NULL THEN
        CASE WHEN t.error IS NULL THEN 'succeeded' ELSE 'discarded' END
    WHEN {lock_held} OR (t.locked_by_id IS NOT NULL AND t.lock_type IN (1, 2)) THEN 'running'
    WHEN coalesce(t.scheduled_at, t.created_at) > (now() AT TIME ZONE 'UTC') THEN
        CASE WHEN coalesce((t.serialized_params ->> 'executions')::integer, 0) > 1
             THEN 'retried' ELSE 'scheduled' END
    WHEN t.performed_at IS NOT NULL THEN 'interrupted'
    ELSE 'queued'
END
