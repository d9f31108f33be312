"""Settings of the test project: PostgreSQL from $DJANGO_DSN (libpq key=value), django-q2 with
its ORM broker. One site ("tests": every cluster signs and reads payloads with that salt), and
clusters of their own keys through django-q2's Q_CLUSTER_NAME and ALT_CLUSTERS: "victim" with
a short retry (its lock: the liveness limit), "live" with django-q2's default one."""

import os

from psycopg import conninfo

parts = conninfo.conninfo_to_dict(os.environ.get("DJANGO_DSN", ""))
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.get("dbname", "postgres"),
        "USER": parts.get("user", "postgres"),
        "PASSWORD": parts.get("password", ""),
        "HOST": parts.get("host", ""),
        "PORT": parts.get("port", ""),
    }
}
INSTALLED_APPS = ["django_q", "q2_tasks"]
Q_CLUSTER = {
    "name": "tests",
    "orm": "default",
    "workers": 1,
    "poll": 0.2,
    "retry": 60,
    "timeout": 50,
    "catch_up": False,
    "ALT_CLUSTERS": {
        "victim": {"retry": 5, "timeout": 4},
        "live": {"retry": 60, "timeout": 50},
    },
}
USE_TZ = True
SECRET_KEY = "tests-only"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGGING_CONFIG = None
