-- purpose: Oban's schema version: Elixir Oban's migration comment on oban_jobs where it has one, else what the Python port's install creates (the producers table it beats in, the suspended state)
SELECT coalesce(
    pg_catalog.obj_description(%(table_oid)s::oid, 'pg_class'),
    CASE WHEN to_regclass(format('%%I.oban_producers', n.nspname)) IS NOT NULL
          AND EXISTS (SELECT 1 FROM pg_enum AS e JOIN pg_type AS ty ON ty.oid = e.enumtypid
                      WHERE ty.typnamespace = n.oid AND ty.typname = 'oban_job_state'
                        AND e.enumlabel = 'suspended')
         THEN 'py-producers' END)
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.oid = %(table_oid)s::oid
