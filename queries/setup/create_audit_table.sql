-- purpose: the audit trail: one row per job or session an action touched, written in the action's transaction
CREATE TABLE IF NOT EXISTS queuetop.audit_log (
    audit_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    db_user     text        NOT NULL DEFAULT current_user,
    os_user     text,
    action      text        NOT NULL,
    queue_table text,
    target      text        NOT NULL,
    from_state  jsonb,
    to_state    text,
    reason      text,
    outcome     text        NOT NULL,
    detail      jsonb
)
