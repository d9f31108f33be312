-- purpose: the chaos run's own schema, apart from the queue it tortures
CREATE SCHEMA IF NOT EXISTS chaos
