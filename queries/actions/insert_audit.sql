-- purpose: append one audit row per job or session an action touched, in the action's own transaction
INSERT INTO queuetop.audit_log
    (os_user, action, queue_table, target, from_state, to_state, reason, outcome, detail)
SELECT %(os_user)s, %(action)s, %(queue_table)s, e.target, e.from_state, e.to_state,
       %(reason)s, e.outcome, e.detail
FROM jsonb_to_recordset(%(entries)s::jsonb)
     AS e(target text, from_state jsonb, to_state text, outcome text, detail jsonb)
