-- purpose: when a consumer last read the message (last_read_at, which pgmq.read stamps since 1.10; NULL while unread)
t.last_read_at
