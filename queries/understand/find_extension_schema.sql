-- purpose: the schema an extension is installed in (NULL where it is not installed in this database)
SELECT n.nspname
FROM pg_extension AS e
JOIN pg_namespace AS n ON n.oid = e.extnamespace
WHERE e.extname = %(name)s
