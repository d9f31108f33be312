-- purpose: remove the demo queue and everything in its schema (init-demo --reset)
DROP SCHEMA IF EXISTS queuetop_demo CASCADE
