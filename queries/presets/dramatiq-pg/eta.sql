-- purpose: when a delayed or retrying message is due: dramatiq's options.eta (milliseconds since the epoch), set only on messages of a delay queue
to_timestamp((t.message -> 'options' ->> 'eta')::float8 / 1000)
