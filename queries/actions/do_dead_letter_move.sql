-- purpose: move jobs still as observed into the dead-letter table in one statement: deleted from the queue and inserted there together, or neither
WITH moved AS (
    DELETE FROM {table} AS t
    USING unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
          AS o(id, status, worker, lease_token)
    WHERE t.{id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {moved_columns}
),
inserted AS (
    INSERT INTO {dead_table} ({dead_columns}) OVERRIDING SYSTEM VALUE
    SELECT {select_columns} FROM moved
    RETURNING {dead_id}
)
SELECT m.queuetop_given, m.{id}::text AS id, NULL::text AS new_token
FROM moved AS m
JOIN inserted AS i ON i.{dead_id} = m.{id}
