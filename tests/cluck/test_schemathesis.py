"""Property-based run of the whole REST API against its own OpenAPI schema (``/api/schema/``).

Schemathesis generates requests for every operation from the schema drf-spectacular serves and
sends them through the WSGI app, authenticated as the Owner of the seeded ``sunrise`` farm. Each
case gets a fresh bearer token (logout and token revocation are among the operations, and must
not lock out the cases after them) and writes carry a fresh ``Idempotency-Key``.
Checks: no 5xx for any input, valid or not; and for valid input every response has a documented
status, content type and body. Bounded: a few examples per operation and mode, under a minute.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tenancy.models import Membership
from tenancy.tokens import issue_token
from tests.mutations import mutation

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
MAX_EXAMPLES = 6
# Schema gaps in routes owned by other parts of the project, found by this run and reported to
# their owners. These operations are still held to "never a 5xx"; delete an entry once fixed.
PENDING_SCHEMA_FIXES: dict[str, str] = {}


def owner_headers() -> dict[str, str]:
    membership = Membership.objects.get(tenant__code="sunrise", user__email="owner@sunrise.example")
    _, raw = issue_token(membership=membership, name=f"schemathesis-{uuid.uuid4().hex[:8]}")
    return {"Authorization": f"Bearer {raw}"}


def check_operation(operation: Any, mode: GenerationMode, checks: list[Any]) -> None:
    """Up to ``MAX_EXAMPLES`` generated cases of one operation; raises on the first failure
    (Hypothesis shrinks it and prints the request to reproduce it)."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: Any) -> None:
        headers = owner_headers()
        if case.method.upper() in WRITE_METHODS:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        # A real server always passes the peer address (the login rate limit keys on it).
        case.call_and_validate(
            headers=headers, checks=checks, environ_base={"REMOTE_ADDR": "127.0.0.1"}
        )

    run()


@pytest.fixture
def wsgi_in_test_transaction() -> Iterator[WSGIHandler]:
    """The real WSGI app, minus the end-of-request connection close (as Django's test client
    does): closing would drop the connection holding the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@mutation(
    "cluck/api/shapes.py",
    find="        return value.as_json()",
    replace="        return value.minor",
)
@pytest.mark.slow
@pytest.mark.django_db
def test_every_operation_conforms_to_the_schema_and_never_5xxs(
    wsgi_in_test_transaction: WSGIHandler, settings: Any
) -> None:
    """Mutation: render ``MoneyField`` as the integer minor units (``return value.minor``)
    → red (ST108 response schema violations on the order, balance and grade lists)."""
    # Every case acts as the one demo owner; the per-member budgets are not under test here.
    settings.TENANCY_API_RATE = "100000/m"
    settings.TENANCY_MAX_PERSONAL_TOKENS = 100000
    call_command("seed_demo", stdout=io.StringIO())
    schema = schemathesis.openapi.from_wsgi("/api/schema/", wsgi_in_test_transaction)
    failures: dict[str, str] = {}
    operations = 0
    for result in schema.get_all_operations():
        if not isinstance(result, Ok):
            failures[f"unloadable operation {operations}"] = str(result.err())
            continue
        operation = result.ok()
        operations += 1
        strict = operation.label not in PENDING_SCHEMA_FIXES
        # Valid requests must get documented answers. Invalid ones (negative mode) must never
        # 5xx; some are refused by URL routing before any view (Django's HTML 404), so their
        # bodies are not held to the schema.
        plan = [
            (GenerationMode.POSITIVE, CHECKS if strict else [not_a_server_error]),
            (GenerationMode.NEGATIVE, [not_a_server_error]),
        ]
        for mode, checks in plan:
            try:
                check_operation(operation, mode, checks)
            except Unsatisfiable:
                continue  # nothing to make invalid (e.g. logout takes no input)
            except (Exception, BaseExceptionGroup) as exc:  # collect every operation's failure
                failures[f"{operation.label} [{mode.value}]"] = f"{type(exc).__name__}: {exc}"
    assert operations >= 20
    assert not failures, "\n\n".join(f"{k}\n{v}" for k, v in failures.items())
