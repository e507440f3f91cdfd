from django.apps import AppConfig


class RlsCarelessConfig(AppConfig):
    """Deliberately careless farm tools (issue 35): each query forgets its tenant, and only
    PostgreSQL's row-level security keeps the other farm's rows out (tests/cluck/test_rls.py)."""

    name = "tests.testapps.rls_careless"
    label = "rls_careless_testapp"
    default_auto_field = "django.db.models.BigAutoField"
