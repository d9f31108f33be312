-- purpose: why the run failed, as Absurd stores it (failure_reason: the serialized error, or $ClaimTimeout from its claim's sweep)
coalesce(t.failure_reason ->> 'message', t.failure_reason ->> 'name')
