"""``manage.py seed_demo``: the demo farms ``sunrise`` and ``hillside``. Idempotent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand

from cluck.demo.production import DEMO_PASSWORD, FARMS, seed_farm

seed_commerce: Callable[..., None] | None
try:
    # Written by the commerce half; the production seed works without it.
    from cluck.demo.commerce import seed_commerce
except ModuleNotFoundError as exc:  # pragma: no cover - only before commerce exists
    if exc.name != "cluck.demo.commerce":
        raise
    seed_commerce = None


class Command(BaseCommand):
    help = (
        "Create (or complete) the demo farms sunrise and hillside: houses, flocks, members, two "
        "weeks of submitted daily entries, then customers, orders and payments. Running it "
        "again changes nothing."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        for plan in FARMS:
            caller = seed_farm(plan)
            if seed_commerce is not None:
                seed_commerce(caller=caller)
            users = ", ".join(user.email for user in plan.users)
            self.stdout.write(f"{plan.code}: {plan.name} — {users}")
        self.stdout.write(f"Demo password for every user: {DEMO_PASSWORD}")
