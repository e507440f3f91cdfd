"""A Django + DRF project a team already has, and the tests that add the toolkit to it.

``manage.py``, ``tracker/``, ``accounts/``, ``orgs/`` and ``projects/`` are the project: an
email user model, simplejwt and session login on its own API, django-allauth's login page,
``ATOMIC_REQUESTS``, its own organizations and memberships, and its own test suite
(``<app>/tests.py``, Django's runner). docs/existing-project.md adds the toolkit to it; the
tests copy the project to a temporary directory and run it there, as its team would.
"""
