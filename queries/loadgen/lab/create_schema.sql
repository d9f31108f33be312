-- purpose: the schema that holds the contention lab's scratch queue, apart from the demo queue
CREATE SCHEMA IF NOT EXISTS queuetop_lab
