"""The farm's readable records: the grade list, a flock's record card, a day's entries.

Resources read through the same selectors as the tools and the REST API, so the same tenant
and flock-scope filters apply: another farm's flock (or a Worker's unassigned one) is the same
"Resource not found" (-32602, ``data.uri``) as a flock that does not exist. Completions answer
from the caller's own data (their flocks, their recent days), bounded.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from cluck.mcp._shared import PAGE_MAX, Reply, caller_of
from cluck.mcp.production import EntryItem, GradeList, _entry_item, list_egg_grades
from cluck.selectors import daily_entries as entry_selectors
from cluck.selectors import flocks as flock_selectors
from mcp_tools import CallContext, resource, resource_template

# Completions are suggestions, not listings: a handful is what a picker shows.
COMPLETIONS_MAX = 20
RECORD_CARD_ENTRIES = 7


def complete_flock_ids(ctx: CallContext, value: str, arguments: dict[str, str]) -> list[str]:
    """Ids of the caller's flocks whose id starts with ``value`` or whose name contains it."""
    needle = value.strip().lower()
    page = flock_selectors.flock_list(caller=caller_of(ctx), limit=PAGE_MAX)
    return [
        str(flock.flock_id)
        for flock in page.items
        if str(flock.flock_id).startswith(needle) or needle in flock.name.lower()
    ][:COMPLETIONS_MAX]


def complete_days(ctx: CallContext, value: str, arguments: dict[str, str]) -> list[str]:
    """The caller's most recent days with entries, newest first, matching ``value``."""
    page = entry_selectors.daily_entry_list(caller=caller_of(ctx), limit=PAGE_MAX)
    days: list[str] = []
    for entry in page.items:
        day = entry.date.isoformat()
        if day.startswith(value.strip()) and day not in days:
            days.append(day)
    return days[:COMPLETIONS_MAX]


@resource(
    uri="farm://grades",
    name="cluck_egg_grades",
    title="Egg grades",
    mime_type="application/json",
    description=(
        "The farm's egg grades (kind, saleable, recordable; the list price per egg only for "
        "owners, managers and sales staff), as cluck_list_egg_grades returns them."
    ),
)
def egg_grades(ctx: CallContext) -> GradeList:
    return list_egg_grades(ctx)


@resource_template(
    "farm://flocks/{flock_id}",
    name="cluck_flock_record_card",
    title="Flock record card",
    mime_type="text/markdown",
    description=(
        "One flock's record card: house, breed, placement, birds alive, status, and its last "
        f"{RECORD_CARD_ENTRIES} daily entries."
    ),
    complete={"flock_id": complete_flock_ids},
)
def flock_record_card(ctx: CallContext, *, flock_id: Annotated[int, Field(gt=0)]) -> str:
    caller = caller_of(ctx)
    flock = flock_selectors.flock_get(caller=caller, flock_id=flock_id)
    recent = entry_selectors.daily_entry_list(
        caller=caller, flock_id=flock.flock_id, limit=RECORD_CARD_ENTRIES
    )
    lines = [
        f"# Flock {flock.name} (#{flock.flock_id})",
        "",
        f"- House: {flock.house_name}",
        f"- Breed: {flock.breed}",
        f"- Placed: {flock.placement_date.isoformat()} ({flock.initial_count} birds)",
        f"- Birds alive: {flock.birds_alive}",
        f"- Status: {flock.status}"
        + ("" if flock.accepts_production_today else " (accepts no production records today)"),
        "",
        f"## Last {RECORD_CARD_ENTRIES} daily entries",
        "",
    ]
    if not recent.items:
        lines.append("_none yet_")
    else:
        lines += [
            "| date | status | eggs | cracked | dirty | discarded | mortality |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {e.date.isoformat()} | {e.status} | {e.total_eggs} | {e.cracked_eggs} | "
            f"{e.dirty_eggs} | {e.discarded_eggs} | {e.mortality_count} |"
            for e in recent.items
        ]
    return "\n".join(lines) + "\n"


class DayEntries(Reply):
    date: dt.date
    entries: list[EntryItem]
    complete: bool = Field(description="False when the day has more entries than shown.")


@resource_template(
    "farm://days/{date}",
    name="cluck_day_entries",
    title="A day's daily entries",
    mime_type="application/json",
    description="Every daily entry you can see for one farm-local date (YYYY-MM-DD).",
    complete={"date": complete_days},
)
def day_entries(ctx: CallContext, *, date: dt.date) -> DayEntries:
    page = entry_selectors.daily_entry_list(
        caller=caller_of(ctx), from_date=date, to_date=date, limit=PAGE_MAX
    )
    return DayEntries(
        date=date, entries=[_entry_item(entry) for entry in page.items], complete=page.complete
    )
