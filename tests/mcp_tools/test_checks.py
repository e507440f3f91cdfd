"""The endpoint's prerequisites are system checks: a misordered MIDDLEWARE fails at start-up."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_tools.checks import (
    BODY_CAP_MIDDLEWARE,
    TENANCY_MIDDLEWARE,
    check_middleware,
)
from tests.mutations import mutation


def _ids(messages: list[Any]) -> set[str]:
    return {message.id for message in messages}


def test_the_project_middleware_passes(settings: Any) -> None:
    assert check_middleware() == []


@mutation(
    "mcp_tools/checks.py",
    find="    elif tenancy_at is not None and body_cap_at > tenancy_at:",
    replace="    elif False:",
)
@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("no body cap", "mcp_tools.E002"),
        ("body cap after tenancy", "mcp_tools.E003"),
        ("no tenancy", "mcp_tools.E004"),
    ],
)
def test_a_misplaced_middleware_is_an_error(settings: Any, change: str, expected: str) -> None:
    """Mutation: drop the ``elif`` ordering clause from ``check_middleware`` → red (E003)."""
    middleware = list(settings.MIDDLEWARE)
    if change == "no body cap":
        middleware.remove(BODY_CAP_MIDDLEWARE)
    elif change == "body cap after tenancy":
        middleware.remove(BODY_CAP_MIDDLEWARE)
        middleware.insert(middleware.index(TENANCY_MIDDLEWARE) + 1, BODY_CAP_MIDDLEWARE)
    else:
        middleware.remove(TENANCY_MIDDLEWARE)
    settings.MIDDLEWARE = middleware
    assert expected in _ids(check_middleware())
