"""Fixtures of the farm's tests."""

from __future__ import annotations

from typing import Any

import pytest

from tenancy.rls.install import install


@pytest.fixture
def rls_on(settings: Any, transactional_db: Any) -> None:
    """Row-level security on for this test, whatever ``CLUCK_RLS`` says (on by default; a
    run with ``CLUCK_RLS=0`` migrated without it): the setting, and the role and policies
    that migrating installs when it is on."""
    settings.TENANCY_RLS = True
    install()
