-- purpose: the error pg-boss stored in output when the job failed (a serialized Error, or value.message from its own timeouts and queuetop's actions)
CASE WHEN t.state IN ('retry', 'failed')
     THEN coalesce(t.output ->> 'message', t.output -> 'value' ->> 'message',
                   t.output ->> 'value') END
