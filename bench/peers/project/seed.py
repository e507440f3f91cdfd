"""Migrate a peer's database, create one shop, its admin and a bearer token; print the token.

    DJANGO_SETTINGS_MODULE=bench.peers.<peer>.settings DATABASE_URL=… \
        python -m bench.peers.project.seed

Run by ``bench/mcp_bench.py`` with the peer venv's python.
"""

from __future__ import annotations


def main() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from bench.peers.project.shops.models import Shop
    from tenancy.models import Membership
    from tenancy.tokens import issue_token

    call_command("migrate", verbosity=0)
    shop = Shop.objects.create(name="Bench shop", code="bench")
    user = get_user_model().objects.create_user(username="owner@bench.test", password=None)
    membership = Membership.objects.create(user=user, tenant=shop, roles=["Admin"])
    print(issue_token(membership=membership, name="bench")[1])


if __name__ == "__main__":
    main()
