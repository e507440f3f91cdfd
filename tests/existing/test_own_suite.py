"""The team's own tests, checks and migrations, with the toolkit added as the guide says."""

from __future__ import annotations

import re

from tests.existing.conftest import Guided

# Every test of the team's own suite (accounts/, orgs/, projects/ tests.py), by module.
OWN_TESTS = {"accounts.tests": 9, "orgs.tests": 3, "projects.tests": 10}


def test_the_projects_own_suite_stays_green(guided_tracker: Guided) -> None:
    out = guided_tracker.output_of("python", "manage.py", "test")
    assert re.search(rf"^Ran {sum(OWN_TESTS.values())} tests in ", out, re.M), out
    assert re.search(r"^OK$", out, re.M), out
    assert "System check identified no issues" in out, out


def test_migrations_checks_and_the_membership_columns(guided_tracker: Guided) -> None:
    assert "No changes detected in app 'orgs'" in guided_tracker.output_of(
        "python", "manage.py", "makemigrations"
    )
    migrated = guided_tracker.output_of("python", "manage.py", "migrate")
    assert "Applying orgs.0002_membership_credential_epoch_disabled_at... OK" in migrated
    assert "Applying tenancy.0001_initial... OK" in migrated
    checked = guided_tracker.output_of("python", "manage.py", "check")
    assert "System check identified no issues" in checked, checked
    # The committed migrations of every app match the models (the project's 0002 among them).
    assert "No changes detected" in guided_tracker.tracker.manage(
        "makemigrations", "--check", "--dry-run"
    )
