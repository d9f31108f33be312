-- purpose: whether the current role may signal other roles' backends (superuser, or member of pg_signal_backend)
SELECT r.rolsuper OR pg_has_role(current_user, 'pg_signal_backend', 'MEMBER') AS can_signal,
       current_user::text AS role
FROM pg_roles AS r
WHERE r.rolname = current_user
