-- purpose: the tables a name pattern may stand for (a preset's one table per queue, pgmq.q_*), from the catalog alone: its LIKE form, in its schema or in any, partitions left out
SELECT n.nspname, c.relname
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND c.relname LIKE %(like)s
  AND (%(schema)s::text IS NULL OR n.nspname = %(schema)s::text)
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY n.nspname, c.relname
