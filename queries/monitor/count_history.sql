-- purpose: finished jobs per state value in the table where a library logs the jobs it deletes (pgqueuer_log): an ordinary read
SELECT h.{history_status}::text AS status, count(*)::bigint AS n
FROM {history_table} AS h
WHERE h.{history_status}::text = ANY (%(values)s::text[])
GROUP BY 1
