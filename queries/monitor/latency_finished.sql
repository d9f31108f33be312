-- purpose: the jobs that finished in the latency window: how long each ran (its finish time minus its start time; NULL where the start is not kept or follows the finish) and whether it ended failed or dead, found by a range on the finish time that an index on it serves; an ordinary read
SELECT {group}::text AS grp,
       CASE WHEN {started_at} <= {finished_at}
            THEN extract(epoch FROM {finished_at} - {started_at})::float8 END AS seconds,
       coalesce({failed}, false) AS failed
FROM {table} AS t
WHERE {finished_since}
