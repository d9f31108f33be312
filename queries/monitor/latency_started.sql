-- purpose: the jobs that started in the latency window and how long each waited before it started (its start time minus its due time, else its enqueue time), found by a range on the start time that an index on it serves; an ordinary read
SELECT {group}::text AS grp,
       extract(epoch FROM {started_at} - {ready_since})::float8 AS seconds
FROM {table} AS t
WHERE {started_since} AND {ready_since} <= {started_at}
