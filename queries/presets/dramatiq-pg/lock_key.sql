-- purpose: the key of the session advisory lock a dramatiq-pg consumer takes on a message while it works (broker.py message_lock, 0.10 to 0.12): sha256 of queue_name || message_id, hex digits 25 to 40 as an unsigned 64-bit number shifted down by 2^63 (the top bit flipped)
(('x' || substr(encode(sha256(convert_to(t.queue_name || t.message_id::text, 'UTF8')), 'hex'), 25, 16))::bit(64)::bigint
 # '-9223372036854775808'::bigint)
