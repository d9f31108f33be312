-- purpose: Solid Queue's schema version, which it keeps in no table of its own: 1 where its execution and process tables of the 1.x schema are there (claimed, failed, ready, scheduled executions, processes with last_heartbeat_at)
SELECT CASE WHEN to_regclass(format('%%I.solid_queue_claimed_executions', n.nspname)) IS NOT NULL
             AND to_regclass(format('%%I.solid_queue_failed_executions', n.nspname)) IS NOT NULL
             AND to_regclass(format('%%I.solid_queue_ready_executions', n.nspname)) IS NOT NULL
             AND to_regclass(format('%%I.solid_queue_blocked_executions', n.nspname)) IS NOT NULL
             AND to_regclass(format('%%I.solid_queue_processes', n.nspname)) IS NOT NULL
            THEN '1' END
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.oid = %(table_oid)s::oid
