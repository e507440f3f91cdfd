"""The documented paths of tenancy's modules that moved into packages keep working one release."""

from __future__ import annotations

import pytest
from django.utils.module_loading import import_string

from tests.mutations import mutation


@mutation(
    "tenancy/_moved.py",
    find="return getattr(import_module(new), name)",
    replace="raise AttributeError(name)",
)
@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "tenancy.authentication.TenancyAuthentication",
            "tenancy.drf_authentication.TenancyAuthentication",
        ),
        (
            "tenancy.credentials.register_bearer_verifier",
            "tenancy.tokens.credentials.register_bearer_verifier",
        ),
        ("tenancy.throttling.rate_budget", "tenancy.rates.throttling.rate_budget"),
        ("tenancy.counters.CounterCache", "tenancy.rates.counters.CounterCache"),
        (
            "tenancy.redis_pool.ProcessConnectionPool",
            "tenancy.rates.redis_pool.ProcessConnectionPool",
        ),
        ("tenancy.external_jwt.verify", "tenancy.idp.external_jwt.verify"),
    ],
)
def test_an_old_path_gives_the_moved_object_and_says_so(old: str, new: str) -> None:
    """A settings string or import of the old path resolves to the very object of the new one,
    with a ``DeprecationWarning`` naming the new path.

    Mutation: the forwarding ``__getattr__`` finds nothing → the old path breaks → red.
    """
    with pytest.warns(DeprecationWarning, match=new.rsplit(".", 1)[0].replace(".", r"\.")):
        moved = import_string(old)
    assert moved is import_string(new)
