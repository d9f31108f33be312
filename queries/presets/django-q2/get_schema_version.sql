-- purpose: django-q2's schema version: the last migration of app django_q that Django applied (django_migrations)
SELECT max(m.name) FROM {schema}.django_migrations AS m WHERE m.app = 'django_q'
