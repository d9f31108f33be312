-- purpose: whether a relation of this name exists in the schema (doctor names the indexes it recommends so that they do not collide)
SELECT EXISTS (SELECT 1 FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
               WHERE n.nspname = %(schema)s AND c.relname = %(name)s)
