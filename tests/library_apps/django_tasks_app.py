"""The test's hand on django-tasks (tests/test_adapter_django_tasks.py), through its API:

    python django_tasks_app.py enqueue JSON   {label: {task, args, queue, run_after_s}} -> ids
    python django_tasks_app.py view IDS       {id: status} by the backend's get_result

DSN from $DJANGO_DSN; run with the project folder on PYTHONPATH.
"""

import json
import os
import sys
from datetime import timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")
import django  # noqa: E402

django.setup()
from django.tasks import default_task_backend  # noqa: E402
from django.utils import timezone  # noqa: E402
from tasks_app import tasks  # noqa: E402


def enqueue(spec: dict) -> dict:
    ids = {}
    for label, job in spec.items():
        fn = getattr(tasks, job["task"])
        options = {"queue_name": job.get("queue", "default")}
        if job.get("run_after_s"):
            options["run_after"] = timezone.now() + timedelta(seconds=job["run_after_s"])
        ids[label] = str(fn.using(**options).enqueue(*job.get("args", [])).id)
    return ids


def view(ids: list[str]) -> dict:
    return {i: default_task_backend.get_result(i).status.value for i in ids}


if __name__ == "__main__":
    command, arg = sys.argv[1], sys.argv[2]
    out = enqueue(json.loads(arg)) if command == "enqueue" else view(json.loads(arg))
    print(json.dumps(out))
