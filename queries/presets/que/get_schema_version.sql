-- purpose: Que's own schema version: Que.migrate! keeps it as the comment on que_jobs (7 for Que 2)
SELECT pg_catalog.obj_description(%(table_oid)s::oid, 'pg_class')
