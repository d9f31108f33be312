-- purpose: the latest audit records, newest first, optionally since a time (a read only: the primary key serves the order and the limit)
SELECT audit_id, at, db_user, os_user, action, queue_table, target, from_state, to_state,
       reason, outcome, detail
FROM queuetop.audit_log
WHERE %(since)s::timestamptz IS NULL OR at >= %(since)s::timestamptz
ORDER BY audit_id DESC
LIMIT %(limit)s
