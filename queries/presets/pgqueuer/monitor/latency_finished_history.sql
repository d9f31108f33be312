-- purpose: pgqueuer's jobs finished in the latency window, from its log (its `created` index finds the window's events): each terminal event (successful, exception, canceled, deleted, or a 'failed' hold), its run time back to the job's last 'picked' event before it (its (job_id, created DESC) index finds that; NULL for a job never picked), and whether it ended failed; an ordinary read
SELECT {history_group}::text AS grp,
       extract(epoch FROM h.created - p.created)::float8 AS seconds,
       h.{history_status}::text = ANY (%(failed_values)s::text[]) AS failed
FROM {history_table} AS h
LEFT JOIN LATERAL (
    SELECT e.created
    FROM {history_table} AS e
    WHERE e.job_id = h.job_id AND e.status = 'picked' AND e.created <= h.created
    ORDER BY e.created DESC
    LIMIT 1
) AS p ON true
WHERE {history_since} AND h.{history_status}::text = ANY (%(finished_values)s::text[])
