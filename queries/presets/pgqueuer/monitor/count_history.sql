-- purpose: pgqueuer's finished jobs: the terminal statuses its log keeps for the jobs it deleted, and the failed jobs it holds in the queue table for an operator (the log's 'failed' rows are hold events, some since requeued, not jobs held now); ordinary reads
SELECT h.{history_status}::text AS status, count(*)::bigint AS n
FROM {history_table} AS h
WHERE h.{history_status}::text = ANY (%(values)s::text[])
  AND h.{history_status}::text <> 'failed'
GROUP BY 1
UNION ALL
SELECT 'failed', count(*)::bigint
FROM {table} AS t
WHERE {state} = 'failed'
