"""A project of cookiecutter-django's shape, and the tests that hold it to the guide.

``manage.py``, ``config/`` and ``harbor/`` are the project, as cookiecutter-django lays one
out: split settings (``config/settings/{base,local,production,test}.py``; ``local.py`` appends
django-debug-toolbar's middleware after ``base.py``'s), a tuple
``DEFAULT_AUTHENTICATION_CLASSES``, drf-spectacular, allauth, the apps under the project's
package (``harbor.users``, ``harbor.orgs``, ``harbor.berths``) and ``manage.py``/``wsgi.py``
appending ``harbor/`` to ``sys.path``. Left out, as nothing here depends on them: Celery,
django-environ (``os.environ`` instead), crispy forms, WhiteNoise, storages, Sentry.
docs/existing-project.md ("A cookiecutter-django project") adds the toolkit to it; the tests
copy it to a temporary directory and run it there.
"""
