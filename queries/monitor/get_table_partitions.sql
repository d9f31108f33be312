-- purpose: the queue table and its partitions (a partitioned table such as pg-boss's job is read through them): their names, to recognise them in a plan; reads the catalog only
SELECT c.relname
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
UNION
SELECT pc.relname
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
CROSS JOIN LATERAL pg_partition_tree(c.oid) AS p
JOIN pg_class AS pc ON pc.oid = p.relid
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
