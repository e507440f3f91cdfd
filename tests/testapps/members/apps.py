from django.apps import AppConfig


class MembersTestAppConfig(AppConfig):
    """A project's own membership table shape (one role column, its own tenant field name),
    with a table of its own beside the farm's ``tenancy.Membership``."""

    name = "tests.testapps.members"
    label = "members_testapp"
    default_auto_field = "django.db.models.BigAutoField"
