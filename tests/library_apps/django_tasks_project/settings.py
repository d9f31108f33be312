"""Settings of the test project: PostgreSQL from $DJANGO_DSN (libpq key=value), the
django-tasks-db backend, and each worker's sessions named 'django_tasks:' + $WORKER_ID (the
preset's liveness opt-in) when that is set."""

import os

from psycopg import conninfo

parts = conninfo.conninfo_to_dict(os.environ.get("DJANGO_DSN", ""))
worker = os.environ.get("WORKER_ID")
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.get("dbname", "postgres"),
        "USER": parts.get("user", "postgres"),
        "PASSWORD": parts.get("password", ""),
        "HOST": parts.get("host", ""),
        "PORT": parts.get("port", ""),
        "OPTIONS": {"application_name": f"django_tasks:{worker}"} if worker else {},
    }
}
INSTALLED_APPS = ["django_tasks_db", "tasks_app"]
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "live", "victim"],
    }
}
USE_TZ = True
SECRET_KEY = "tests-only"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGGING_CONFIG = None
