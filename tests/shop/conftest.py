"""A migrated copy of the shop, set up with exactly the commands docs/new-project.md lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.shop.harness import GuidedShop, Shop, copy_project, owners_with_tokens, run_guide


@pytest.fixture(scope="session")
def guided_sqlite_shop(tmp_path_factory: Any) -> GuidedShop:
    """A copy of the shop on SQLite (its default: ``db.sqlite3`` beside ``manage.py``), set up
    by the guide's commands, plus a second store with its own owner (and a third, whose token
    only the rate-limit test uses)."""
    shop = Shop(copy_project(Path(tmp_path_factory.mktemp("sqlite"))))
    guided = run_guide(shop)
    guided.tokens |= owners_with_tokens(
        shop, [("harbour", "owner@harbour.example"), ("rates", "owner@rates.example")]
    )
    return guided
