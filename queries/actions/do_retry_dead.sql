-- purpose: retry jobs from the dead-letter table in one statement: deleted there and inserted back into the queue as ready (worker and lease cleared, lease token advanced), only while each is still as observed and its id is free in the queue
WITH moved AS (
    DELETE FROM {dead_table} AS t
    USING unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
          AS o(id, status, worker, lease_token)
    WHERE t.{id} = o.id::{id_type}
      AND {state}::text = o.status
      AND {worker}::text IS NOT DISTINCT FROM o.worker
      AND {lease_token}::text IS NOT DISTINCT FROM o.lease_token
      AND NOT EXISTS (SELECT 1 FROM {table} AS q WHERE q.{id} = t.{id})
    RETURNING o.id AS queuetop_given, {moved_columns}
),
inserted AS (
    INSERT INTO {table} AS t ({queue_columns}) OVERRIDING SYSTEM VALUE
    SELECT {select_columns} FROM moved AS t
    RETURNING t.{id}, {lease_token}::text AS new_token
)
SELECT m.queuetop_given, m.{id}::text AS id, i.new_token
FROM moved AS m
JOIN inserted AS i ON i.{id} = m.{id}
