-- purpose: the privileges the current role holds on a table (schema USAGE, UPDATE, DELETE, INSERT, SELECT); no row if the table does not exist
SELECT has_schema_privilege(n.oid, 'USAGE') AS can_use_schema,
       has_table_privilege(c.oid, 'UPDATE') AS can_update,
       has_table_privilege(c.oid, 'DELETE') AS can_delete,
       has_table_privilege(c.oid, 'INSERT') AS can_insert,
       has_table_privilege(c.oid, 'SELECT') AS can_select,
       current_user::text AS role
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
