-- purpose: how many times dramatiq's Retries middleware retried the message (options.retries; absent before its first failure)
coalesce((t.message -> 'options' ->> 'retries')::int, 0)
