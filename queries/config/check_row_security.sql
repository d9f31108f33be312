-- purpose: whether row-level security hides every row of the table from the current role (it is on, no policy lets anyone read, and the role is neither its owner, unless forced, nor a superuser or BYPASSRLS role), and the owner to name instead
SELECT c.relrowsecurity
       AND NOT EXISTS (SELECT 1 FROM pg_policy AS p WHERE p.polrelid = c.oid)
       AND NOT r.rolsuper AND NOT r.rolbypassrls
       AND (c.relforcerowsecurity OR NOT pg_has_role(c.relowner, 'USAGE')) AS hidden,
       pg_get_userbyid(c.relowner) AS owner
FROM pg_class AS c
CROSS JOIN pg_roles AS r
WHERE c.oid = %(oid)s AND r.rolname = current_user
