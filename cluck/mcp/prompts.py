"""The farm's prompts: ready-made requests a user picks in their client.

``cluck_summarise_day`` ("summarise yesterday's production") embeds the day's entries as a
resource (``farm://days/{date}``) and, for one flock, its record card, so the model works from
the farm's own figures. Arguments complete from the caller's own data (their flock names, their
recent days).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from mcp_types import EmbeddedResource, PromptMessage, TextResourceContents
from pydantic import Field

from cluck.mcp._shared import PAGE_MAX, caller_of
from cluck.mcp.resources import (
    COMPLETIONS_MAX,
    complete_days,
    day_entries,
    flock_record_card,
)
from cluck.selectors import flocks as flock_selectors
from mcp_tools import CallContext, ToolError, prompt
from mcp_tools.authoring.prompts import user


def complete_flock_names(ctx: CallContext, value: str, arguments: dict[str, str]) -> list[str]:
    """The caller's flock names containing ``value`` (case-insensitive), each once."""
    needle = value.strip().lower()
    names: list[str] = []
    for flock in flock_selectors.flock_list(caller=caller_of(ctx), limit=PAGE_MAX).items:
        if needle in flock.name.lower() and flock.name not in names:
            names.append(flock.name)
    return names[:COMPLETIONS_MAX]


def _day(ctx: CallContext, date: str | None) -> dt.date:
    if date is None:
        return caller_of(ctx).farm.today() - dt.timedelta(days=1)
    try:
        return dt.date.fromisoformat(date.strip())
    except ValueError:
        raise ToolError("Prompt.InvalidDate", f"{date!r} is not a YYYY-MM-DD date.") from None


def _embedded(uri: str, mime_type: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(
        type="resource", resource=TextResourceContents(uri=uri, mime_type=mime_type, text=text)
    )


@prompt(
    name="cluck_summarise_day",
    title="Summarise a day's production",
    description=(
        "Summarise one day's production (default: yesterday, farm-local) for the farm "
        "owner, from the day's daily entries, optionally focusing on one flock."
    ),
    complete={"flock": complete_flock_names, "date": complete_days},
)
def summarise_day(
    ctx: CallContext,
    *,
    date: Annotated[
        str | None, Field(description="Farm-local date, YYYY-MM-DD (default: yesterday).")
    ] = None,
    flock: Annotated[
        str | None, Field(description="A flock name or id (default: every flock you see).")
    ] = None,
) -> list[PromptMessage]:
    caller = caller_of(ctx)
    day = _day(ctx, date)
    focus = (
        None if flock is None else flock_selectors.flock_resolve(caller=caller, name_or_id=flock)
    )
    yesterday = day == caller.farm.today() - dt.timedelta(days=1)
    entries = day_entries(ctx, date=day)
    instruction = (
        f"Summarise the egg production of {caller.farm.name} on {day.isoformat()}"
        + (" (yesterday)" if yesterday else "")
        + ("" if focus is None else f", focusing on flock {focus.name}")
        + ". Use only the figures in the attached records: eggs collected, the cracked, dirty "
        "and discarded shares, graded eggs per grade and mortality. Point out anything unusual "
        "(a cracked or dirty share far from the others, deaths) and list any entry still in "
        "Draft, which is not in stock yet. Counts are eggs, not trays."
    )
    messages = [
        user(instruction),
        user(
            _embedded(
                f"farm://days/{day.isoformat()}",
                "application/json",
                entries.model_dump_json(by_alias=True),
            )
        ),
    ]
    if focus is not None:
        card = flock_record_card(ctx, flock_id=focus.flock_id)
        messages.append(user(_embedded(f"farm://flocks/{focus.flock_id}", "text/markdown", card)))
    return messages
