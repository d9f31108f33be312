-- purpose: the jobs the history table logged as finished in the latency window (a finished state value): how long each ran where the history keeps its start, and whether it ended failed or dead, found by a range on its finish time that an index on it serves; an ordinary read
SELECT {history_group}::text AS grp,
       CASE WHEN {history_started} <= {history_finished}
            THEN extract(epoch FROM {history_finished} - {history_started})::float8 END AS seconds,
       h.{history_status}::text = ANY (%(failed_values)s::text[]) AS failed
FROM {history_table} AS h
WHERE {history_since} AND h.{history_status}::text = ANY (%(finished_values)s::text[])
