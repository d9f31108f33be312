-- purpose: server version, database and role of the monitoring connection
SELECT current_setting('server_version') AS version,
       current_database() AS database,
       current_user AS "user"
