"""``cluck.W002`` / ``cluck.W003``: session state configured on what looks like a pooler."""

from __future__ import annotations

from typing import Any

import pytest

from cluck.checks import pooled_session_warnings


def _databases(**default: Any) -> dict[str, Any]:
    return {"default": {"ENGINE": "cluck.postgres", "HOST": "db", "PORT": "5432", **default}}


@pytest.mark.parametrize(
    ("database", "ids"),
    [
        ({"PORT": "6432", "OPTIONS": {"prepare_threshold": 5}}, {"cluck.W002", "cluck.W003"}),
        (
            {"HOST": "pgbouncer.internal", "OPTIONS": {"prepare_threshold": 5}},
            {"cluck.W002", "cluck.W003"},
        ),
        (
            {
                "PORT": "6432",
                "OPTIONS": {"prepare_threshold": None},
                "DISABLE_SERVER_SIDE_CURSORS": True,
            },
            set(),
        ),
        ({"PORT": "5432", "OPTIONS": {"prepare_threshold": 5}}, set()),
    ],
)
def test_prepared_statements_and_cursors_behind_a_pooler_warn(
    database: dict[str, Any], ids: set[str]
) -> None:
    assert {message.id for message in pooled_session_warnings(_databases(**database))} == ids
