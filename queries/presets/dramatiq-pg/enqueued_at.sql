-- purpose: when the message was sent: dramatiq's message_timestamp (milliseconds since the epoch, in the message)
to_timestamp((t.message ->> 'message_timestamp')::float8 / 1000)
