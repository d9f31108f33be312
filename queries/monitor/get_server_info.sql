-- purpose: server version (text and number), database, role and standby state of the monitoring connection
SELECT current_setting('server_version') AS version,
       current_database() AS database,
       current_user AS "user",
       current_setting('server_version_num')::int AS version_num,
       pg_is_in_recovery() AS in_recovery
