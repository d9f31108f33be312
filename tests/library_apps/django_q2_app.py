"""The test's hand on django-q2 (tests/test_adapter_django_q2.py), through its API:

    python django_q2_app.py enqueue JSON   {label: {task, args, cluster, ack_failure}}
                                           -> {label: {task: its id, ormq: its django_q_ormq id}}
    python django_q2_app.py view JSON      {keys: {key: [queue_size, lock_size]} by its ORM
                                           broker, success: n, failure: n (its Success and
                                           Failure models), results: {task id: success}}

DSN from $DJANGO_DSN; run with the project folder on PYTHONPATH.
"""

import json
import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
import django  # noqa: E402

django.setup()
from django_q.brokers import get_broker  # noqa: E402
from django_q.models import Failure, OrmQ, Success  # noqa: E402
from django_q.tasks import async_task, fetch  # noqa: E402


def enqueue(spec: dict) -> dict:
    ids = {}
    for label, job in spec.items():
        options = {"cluster": job.get("cluster", "tests")}
        if job.get("ack_failure"):
            options["ack_failure"] = True
        task_id = async_task(
            f"q2_tasks.tasks.{job['task']}", label, *job.get("args", []), **options
        )
        [row] = [q for q in OrmQ.objects.all() if q.task_id() == task_id]
        ids[label] = {"task": task_id, "ormq": row.pk}
    return ids


def view(arg: dict) -> dict:
    keys = {}
    for key in arg.get("keys", []):
        broker = get_broker(key)
        keys[key] = [broker.queue_size(), broker.lock_size()]
    results = {}
    for task_id in arg.get("tasks", []):
        task = fetch(task_id)
        results[task_id] = None if task is None else task.success
    return {
        "keys": keys,
        "success": Success.objects.count(),
        "failure": Failure.objects.count(),
        "results": results,
    }


if __name__ == "__main__":
    command, arg = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(enqueue(arg) if command == "enqueue" else view(arg)))
