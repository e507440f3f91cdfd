"""Every guard that names its mutation carries it as a ``@mutation`` record that still applies.

``./scripts/mutations`` re-applies the records and expects each guard red; this cheap check
(no database, nothing run) keeps the records from drifting in between.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mutations import NoLongerApplies, plan, recorded, unrecorded

ROOT = Path(__file__).resolve().parents[1]
RECORDS = recorded(ROOT)


def test_every_guard_naming_a_mutation_records_it() -> None:
    assert unrecorded(ROOT) == []
    assert len(RECORDS) >= 250


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record.ident)
def test_each_recorded_mutation_still_applies(record) -> None:
    try:
        plan(record, ROOT)
    except NoLongerApplies as exc:
        pytest.fail(f"{record.ident}: {exc} — update the record with the code", pytrace=False)
