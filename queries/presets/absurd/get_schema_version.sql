-- purpose: Absurd's own schema version (absurd.get_schema_version(), which its SQL and every migration rewrite), where the table is the runs table of a queue absurd.queues lists
SELECT {schema}.get_schema_version()
FROM pg_class AS c
WHERE c.oid = %(table_oid)s::oid
  AND EXISTS (SELECT 1 FROM {schema}.queues AS q WHERE 'r_' || q.queue_name = c.relname)
