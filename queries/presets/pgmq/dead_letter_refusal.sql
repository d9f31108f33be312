-- purpose: why queuetop will not dead-letter a pgmq message: pgmq has no dead state (a message no consumer deletes is read again once its vt passes, and pgmq.archive is also where done messages go)
'pgmq has no dead state: archive or delete the message with pgmq (pgmq.archive keeps it in the queue''s a_ table)'::text
