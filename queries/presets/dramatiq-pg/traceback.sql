-- purpose: why the message last failed: the traceback dramatiq's Retries middleware stores in options.traceback
t.message -> 'options' ->> 'traceback'
