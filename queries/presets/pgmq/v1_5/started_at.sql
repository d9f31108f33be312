-- purpose: when a consumer last read the message: pgmq before 1.10 keeps no read time (its vt alone says when the read runs out)
NULL::timestamptz
