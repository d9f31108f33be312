-- purpose: why procrastinate forbids requeueing this job, else NULL: an abort was requested (its retry marks such a job failed, and its CHECK forbids todo with abort_requested), or another waiting job holds its queueing_lock (unique among todo jobs)
CASE
    WHEN t.abort_requested
        THEN 'procrastinate refuses: an abort was requested for this job (dead-letter it instead)'
    WHEN t.queueing_lock IS NOT NULL AND EXISTS (
            SELECT 1 FROM {table} AS other
            WHERE other.queueing_lock = t.queueing_lock AND other.status = 'todo'
              AND other.{id} <> {job_id})
        THEN 'procrastinate refuses: another waiting job holds queueing_lock '
             || quote_literal(t.queueing_lock)
END
