"""Harbor's own tests of its organizations (pytest, ``--ds=config.settings.test``)."""

from tenancy.roles import active_roles

from harbor.orgs import roles


def test_the_toolkit_reads_harbors_own_roles() -> None:
    # The very module the tools import, not a second copy of it under another name.
    assert active_roles() is roles.ROLES
    assert active_roles().names == ("staff", "owner")
