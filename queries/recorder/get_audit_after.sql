-- purpose: the audit records after an id watermark, oldest first, for a recording (a read only: the primary key serves the range, the order and the limit)
SELECT audit_id, at, db_user, os_user, action, queue_table, target, from_state, to_state,
       reason, outcome, detail
FROM queuetop.audit_log
WHERE audit_id > %(after_id)s AND at >= %(since)s::timestamptz
ORDER BY audit_id
LIMIT %(limit)s
