-- purpose: pgqueuer's jobs picked in the latency window, from its log (its `created` index finds the window's events): each 'picked' event and its wait back to the job's last 'queued' event before it (its (job_id, created DESC) index finds that); the log keeps no due time, so a job enqueued to run later counts that delay as wait; an ordinary read
SELECT h.entrypoint::text AS grp,
       extract(epoch FROM h.created - q.created)::float8 AS seconds
FROM {history_table} AS h
CROSS JOIN LATERAL (
    SELECT e.created
    FROM {history_table} AS e
    WHERE e.job_id = h.job_id AND e.status = 'queued' AND e.created <= h.created
    ORDER BY e.created DESC
    LIMIT 1
) AS q
WHERE h.created >= now() - make_interval(secs => %(window_s)s::float8)
  AND h.status = 'picked'
