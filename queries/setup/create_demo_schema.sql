-- purpose: the schema that holds the built-in demo queue
CREATE SCHEMA IF NOT EXISTS queuetop_demo
