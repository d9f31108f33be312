-- purpose: remove the contention lab's scratch queue and its log (each cell starts on a fresh one)
DROP SCHEMA IF EXISTS queuetop_lab CASCADE
