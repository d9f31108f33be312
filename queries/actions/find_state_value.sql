-- purpose: whether the queue table holds a row in one state value (an action writes a guessed value only if so); served by an index on the state
SELECT EXISTS (SELECT 1 FROM {table} AS t WHERE {state} = %(value)s)
