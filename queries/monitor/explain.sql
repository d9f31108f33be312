-- purpose: the plan the server would choose for a monitoring statement, without running it: which indexes serve it and how many rows it expects
EXPLAIN (FORMAT JSON) {statement}
