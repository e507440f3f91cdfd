"""The farm's long-running operation: a month-by-month production report over a date range.

Declared ``task_support="optional"``: a client that negotiated the tasks extension gets a task
handle at once and polls it (``tasks/get``) while the report is assembled month by month; any
other client waits for the answer as for any tool (and, if it sent a progress token and accepts
a stream, sees the months go by). Validation and the flock lookup happen before the hand-over,
so a bad range is an immediate tool error, not a failed task. A client that closes its stream
stops the report at the next month (``mcp_tools`` cancellation).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import Field

from cluck.mcp._shared import FLOCK_NAME, Reply, caller_of
from cluck.selectors import flocks as flock_selectors
from cluck.selectors import reports as report_selectors
from mcp_tools import CallContext, tool


class GradeTotalOut(Reply):
    grade: str
    quantity: int = Field(description="Eggs.")


class MonthOut(Reply):
    month: str = Field(description="YYYY-MM (the first and last month may be partial).")
    from_date: dt.date
    to_date: dt.date
    entries: int = Field(description="Submitted daily entries counted.")
    total_eggs: int
    cracked_eggs: int
    dirty_eggs: int
    discarded_eggs: int
    mortality_count: int
    graded: list[GradeTotalOut]
    drafts_not_counted: int = Field(description="Draft entries in the month, not yet counted.")


class ProductionReport(Reply):
    from_date: dt.date
    to_date: dt.date
    flock: str | None = Field(description="The flock reported on; null for every flock.")
    unit: str = "eggs"
    months: list[MonthOut]
    total_eggs: int
    mortality_count: int


@tool(
    name="cluck_production_report",
    errors={
        "Validation.Failed": "fromDate is after toDate, or the range spans more than 36 months "
        "(data.errors).",
        **FLOCK_NAME,
    },
    read_only=True,
    task_support="optional",
    mirrors_no_route=(
        "a report assembled month by month from the daily entries REST clients page through "
        "daily-entry-list; long ranges run as a task"
    ),
    title="Production report",
    description=(
        "Month-by-month production over a date range (farm-local, inclusive, at most 36 "
        "months): eggs collected, cracked, dirty, discarded, graded per grade and mortality, "
        "from submitted daily entries only (Drafts are counted apart), optionally for one "
        "flock (name or id). Long ranges run as a task when your client supports tasks."
    ),
)
def production_report(
    ctx: CallContext,
    *,
    from_date: dt.date,
    to_date: dt.date,
    flock: Annotated[str | None, Field(max_length=200, description="Flock name or id.")] = None,
) -> ProductionReport:
    caller = caller_of(ctx)
    months = report_selectors.report_months(from_date=from_date, to_date=to_date)
    flock_view = (
        None if flock is None else flock_selectors.flock_resolve(caller=caller, name_or_id=flock)
    )
    # Everything above answers at once; the rest runs as a task when the client negotiated it.
    ctx.continue_as_task()
    rows = []
    for index, (first, last) in enumerate(months):
        # Also the checkpoint between months: a call whose client hung up (or a cancelled
        # task) stops here with CallCancelled instead of assembling a report for nobody.
        ctx.report_progress(index, len(months), f"{first:%Y-%m}")
        month = report_selectors.production_month(
            caller=caller,
            first_day=first,
            last_day=last,
            flock_id=None if flock_view is None else flock_view.flock_id,
        )
        rows.append(
            MonthOut(
                month=month.month,
                from_date=month.first_day,
                to_date=month.last_day,
                entries=month.entries,
                total_eggs=month.total_eggs,
                cracked_eggs=month.cracked_eggs,
                dirty_eggs=month.dirty_eggs,
                discarded_eggs=month.discarded_eggs,
                mortality_count=month.mortality_count,
                graded=[
                    GradeTotalOut(grade=g.grade_name, quantity=g.quantity) for g in month.graded
                ],
                drafts_not_counted=month.drafts_not_counted,
            )
        )
    ctx.report_progress(len(months), len(months), "done")
    return ProductionReport(
        from_date=from_date,
        to_date=to_date,
        flock=None if flock_view is None else flock_view.name,
        months=rows,
        total_eggs=sum(row.total_eggs for row in rows),
        mortality_count=sum(row.mortality_count for row in rows),
    )
