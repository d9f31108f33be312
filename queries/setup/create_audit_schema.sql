-- purpose: the schema that holds queuetop's audit trail
CREATE SCHEMA IF NOT EXISTS queuetop
