-- purpose: the demo dead-letter table: the job's columns plus why, when and by whom
CREATE TABLE IF NOT EXISTS queuetop_demo.jobs_dead (
    LIKE queuetop_demo.jobs INCLUDING DEFAULTS,
    dead_reason text        NOT NULL DEFAULT '',
    dead_at     timestamptz NOT NULL DEFAULT now(),
    dead_by     text        NOT NULL DEFAULT current_user,
    PRIMARY KEY (id)
)
