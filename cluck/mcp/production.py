"""Production tools: flocks, egg grades, stock, daily entries (record, then submit).

Each tool is thin: it resolves names to ids, calls the same selectors and services the REST API
uses, and re-projects the result. No validation rule, authorization decision or tenant/flock
predicate lives here. Submitting asks the user to confirm the figures first when the client can
ask (2026-07-28 elicitation), and proceeds as before when it cannot.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from cluck.api.base import decode_cursor
from cluck.api.production import StockSummaryApi, StockSummaryOutputSerializer
from cluck.caller import Caller
from cluck.mcp._shared import (
    BAD_CURSOR,
    ENTRY_CHECKS,
    FLOCK_NAME,
    PAGE_DEFAULT,
    PAGE_MAX,
    Cursor,
    Limit,
    MoneyOut,
    Reply,
    caller_of,
    hidden_money,
    money_out,
    next_cursor,
)
from cluck.roles import PRODUCTION_WRITE
from cluck.selectors import daily_entries as entry_selectors
from cluck.selectors import flocks as flock_selectors
from cluck.selectors import grades as grade_selectors
from cluck.selectors import stock as stock_selectors
from cluck.services import daily_entries as entry_services
from mcp_tools import CallContext, ToolError, tool
from mcp_tools.contrib.drf import drf_tool

# --- flocks ----------------------------------------------------------------------------------


class FlockItem(Reply):
    flock_id: int
    name: str
    status: str
    birds_alive: int
    accepts_production_today: bool
    house: str
    breed: str
    placement_date: dt.date


class FlockPage(Reply):
    flocks: list[FlockItem]
    complete: bool
    next_cursor: str | None
    scope_note: str | None = Field(
        default=None, description="Set when you see only the flocks you are assigned to."
    )


@tool(
    name="cluck_list_flocks",
    errors=BAD_CURSOR,
    read_only=True,
    mirrors=("flock-list", "flock-detail"),
    title="List flocks",
    description=(
        "The farm's flocks you can access, by name: id, status (Active/Depleted/Archived), "
        "birds alive now, the house, and whether it accepts production records today. Flock "
        "names can repeat (a depleted flock may share its name with the active one): use "
        "flockId to be exact. Pass nextCursor back as cursor to continue."
    ),
)
def list_flocks(
    ctx: CallContext,
    *,
    status: Literal["Active", "Depleted", "Archived"] | None = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> FlockPage:
    caller = caller_of(ctx)
    page = flock_selectors.flock_list(
        caller=caller,
        status=status,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=flock_selectors.FLOCK_CURSOR_KEYS),
    )
    return FlockPage(
        flocks=[
            FlockItem(
                flock_id=f.flock_id,
                name=f.name,
                status=f.status,
                birds_alive=f.birds_alive,
                accepts_production_today=f.accepts_production_today,
                house=f.house_name,
                breed=f.breed,
                placement_date=f.placement_date,
            )
            for f in page.items
        ],
        complete=page.complete,
        next_cursor=next_cursor(page.next_position),
        scope_note=flock_selectors.flock_scope_note(caller=caller),
    )


# --- grades and stock ------------------------------------------------------------------------


class GradeItem(Reply):
    egg_grade_id: int
    name: str
    grade_type: str
    kind: str = Field(description="Manual: recorded as grade lines. Cracked/Dirty: counters.")
    saleable: bool
    active: bool
    recordable: bool = Field(description="May be named in a daily entry's grades list.")
    unit_price: MoneyOut | None = hidden_money(
        "Default list price per egg; only for sales-access roles."
    )


class GradeList(Reply):
    grades: list[GradeItem]
    complete: bool


@tool(
    name="cluck_list_egg_grades",
    read_only=True,
    mirrors="egg-grade-list",
    title="List egg grades",
    description=(
        "The farm's egg grades (e.g. Small, Medium, Large) with kind, whether saleable, and "
        "whether a daily entry's grades list may name them (recordable). Use these names in "
        "cluck_record_daily_entry. The list price (unitPrice) appears only for owners, "
        "managers and sales staff."
    ),
)
def list_egg_grades(ctx: CallContext) -> GradeList:
    page = grade_selectors.egg_grade_list(caller=caller_of(ctx), limit=PAGE_MAX)
    return GradeList(
        grades=[
            GradeItem(
                egg_grade_id=g.egg_grade_id,
                name=g.name,
                grade_type=g.grade_type,
                kind=g.kind,
                saleable=g.is_saleable,
                active=g.is_active,
                recordable=g.is_recordable,
                unit_price=money_out(g.unit_price),
            )
            for g in page.items
        ],
        complete=page.complete,
    )


class StockItem(Reply):
    egg_grade_id: int
    grade_name: str
    available: int = Field(description="Eggs available to sell (excludes restricted lots).")
    restricted: int = Field(description="Eggs held back (e.g. medication withdrawal).")


class StockReply(Reply):
    as_of_date: dt.date
    unit: Literal["eggs"] = "eggs"
    grades: list[StockItem]
    complete: bool


@tool(
    name="cluck_read_stock",
    read_only=True,
    mirrors="stock-summary",
    title="Read egg stock",
    description=(
        "Eggs in stock per grade, counted in eggs, as of a farm-local date (default: the "
        "farm's today). Only submitted daily entries are stock; a Draft is not."
    ),
)
def read_stock(ctx: CallContext, *, as_of_date: dt.date | None = None) -> StockReply:
    summary = stock_selectors.stock_summary(caller=caller_of(ctx), as_of=as_of_date)
    return StockReply(
        as_of_date=summary.as_of,
        grades=[
            StockItem(
                egg_grade_id=line.egg_grade_id,
                grade_name=line.grade_name,
                available=line.available,
                restricted=line.restricted,
            )
            for line in summary.lines
        ],
        complete=summary.complete,
    )


# The REST view itself, published as a tool next to the hand-written one above: its arguments
# and answer are the route's (``asOfDate``, ``items``), run through the view's own permission
# classes and query validation. cluck_read_stock stays the model-facing tool (its reply names
# the unit and the tenant-local date in the words the other tools use); this one is for a
# client that wants exactly what GET /api/v1/stock/ answers (docs/add-your-own-tool.md).
drf_tool(
    StockSummaryApi,
    "get",
    name="cluck_stock_summary",
    title="Stock summary (REST view)",
    description=(
        "Exactly what GET /api/v1/stock/ answers: eggs in stock per grade (available and "
        "restricted) as of asOfDate (default: the farm's today)."
    ),
    query_serializer=StockSummaryApi.InputSerializer,
    output_serializer=StockSummaryOutputSerializer,
)


# --- daily entries ---------------------------------------------------------------------------


class GradeLineOut(Reply):
    grade: str
    egg_grade_id: int
    quantity: int


class EntryItem(Reply):
    daily_entry_id: int
    flock_id: int
    flock_name: str
    house: str
    date: dt.date
    status: str
    total_eggs: int
    cracked_eggs: int
    dirty_eggs: int
    discarded_eggs: int
    mortality_count: int
    grades: list[GradeLineOut]


class EntryPage(Reply):
    entries: list[EntryItem]
    complete: bool
    next_cursor: str | None
    scope_note: str | None = None


def _entry_item(entry: entry_selectors.DailyEntryView) -> EntryItem:
    return EntryItem(
        daily_entry_id=entry.entry_id,
        flock_id=entry.flock_id,
        flock_name=entry.flock_name,
        house=entry.house_name,
        date=entry.date,
        status=entry.status,
        total_eggs=entry.total_eggs,
        cracked_eggs=entry.cracked_eggs,
        dirty_eggs=entry.dirty_eggs,
        discarded_eggs=entry.discarded_eggs,
        mortality_count=entry.mortality_count,
        grades=[
            GradeLineOut(
                grade=line.grade_name, egg_grade_id=line.egg_grade_id, quantity=line.quantity
            )
            for line in entry.grades
        ],
    )


@tool(
    name="cluck_list_daily_entries",
    errors={
        **FLOCK_NAME,
        "Validation.Failed": "A bad `cursor`, or `toDate` before `fromDate` "
        "(DailyEntry.DateRange.Inverted); data.errors lists each.",
    },
    read_only=True,
    mirrors=("daily-entry-list", "daily-entry-detail"),
    title="List daily entries",
    description=(
        "Daily production records (eggs collected, cracked, dirty, discarded, mortality, "
        "graded lines), newest first, optionally for one flock (name or id) and a date range "
        "(inclusive, farm-local dates). Status Draft means not yet in stock."
    ),
)
def list_daily_entries(
    ctx: CallContext,
    *,
    flock: Annotated[str | None, Field(max_length=200, description="Flock name or id.")] = None,
    from_date: dt.date | None = None,
    to_date: dt.date | None = None,
    limit: Limit = PAGE_DEFAULT,
    cursor: Cursor = None,
) -> EntryPage:
    caller = caller_of(ctx)
    flock_id = None
    if flock is not None:
        flock_id = flock_selectors.flock_resolve(caller=caller, name_or_id=flock).flock_id
    page = entry_selectors.daily_entry_list(
        caller=caller,
        flock_id=flock_id,
        from_date=from_date,
        to_date=to_date,
        limit=limit,
        cursor_position=decode_cursor(cursor, keys=entry_selectors.ENTRY_CURSOR_KEYS),
    )
    return EntryPage(
        entries=[_entry_item(entry) for entry in page.items],
        complete=page.complete,
        next_cursor=next_cursor(page.next_position),
        scope_note=flock_selectors.flock_scope_note(caller=caller),
    )


class GradeQuantity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grade: str | int = Field(description="Egg grade name (see cluck_list_egg_grades) or id.")
    quantity: int = Field(description="Eggs of this grade.")


class RecordReply(Reply):
    daily_entry_id: int
    flock_name: str
    date: dt.date
    status: str
    created: bool = Field(
        description="True if a new entry was created; false if a draft was updated."
    )


def _flock_id_for_write(caller: Caller, flock: str | int) -> int:
    """An id goes to the handler as it is — its flock-scope guard answers an unassigned flock
    with ``FlockScope.NotAssigned``, as over REST. A name resolves to exactly one accessible
    flock first."""
    if isinstance(flock, int):
        return flock
    text = flock.strip()
    if text.isdigit() and len(text) < 19:
        return int(text)
    return flock_selectors.flock_resolve(caller=caller, name_or_id=text).flock_id


@tool(
    name="cluck_record_daily_entry",
    errors={
        "Validation.Failed": "A field breaks a rule; data.errors lists each with its code: "
        "DailyEntry.Date.NotFuture (after the farm's today), DailyEntry.Date.TooOld (before "
        "the farm's late-entry grace), DailyEntry.<Counter>.NonNegative / .TooLarge, "
        "DailyEntry.Eggs.SumWithinTotal, DailyEntry.FlockId.Required, "
        "DailyEntry.GradeQuantity.Positive, DailyEntry.Grades.Unique, "
        "DailyEntry.Grades.WithinAvailable, DailyEntry.Grades.TooMany.",
        **FLOCK_NAME,
        "EggGrade.NotFound": "No grade has that name or id (data.validNames).",
        "EggGrade.Ambiguous": "Grade names differ only in case: pass the id (data.candidates).",
        "DailyEntry.FlockNotActive": "The flock does not accept production on that date "
        "(archived, or depleted before it).",
        **ENTRY_CHECKS,
        "DailyEntry.UnknownGrade": "A grade line names a grade that is not recordable "
        "(data.validGrades).",
        "DailyEntry.GradesExceedTotal": "Graded eggs exceed total − cracked − dirty − discarded.",
        "DailyEntry.Immutable": "The day's entry is no longer a Draft.",
    },
    policy=PRODUCTION_WRITE,
    mirrors="daily-entry-record",
    title="Record a day's production",
    description=(
        "Record one flock's day: eggs collected (totalEggs, counted in eggs), of which cracked, "
        "dirty and discarded, birds that died (mortalityCount), and optionally graded lines "
        "[{grade, quantity}] (omit grades to keep existing lines; [] clears them). Recording "
        "the same flock and date again updates the Draft. The farm and house come from the "
        "flock. This leaves a Draft: call cluck_submit_daily_entry with the returned "
        "dailyEntryId to put the eggs in stock. If a flock name is ambiguous you get the "
        "candidates; retry with the flockId. Reuse the same idempotencyKey only to retry the "
        "same call."
    ),
)
def record_daily_entry(
    ctx: CallContext,
    *,
    flock: Annotated[str | int, Field(description="Flock name or id (see cluck_list_flocks).")],
    date: Annotated[
        dt.date, Field(description="Farm-local date of the collection, not in the future.")
    ],
    total_eggs: int,
    cracked_eggs: int,
    dirty_eggs: int,
    discarded_eggs: int = 0,
    mortality_count: int,
    grades: Annotated[list[GradeQuantity] | None, Field(max_length=50)] = None,
) -> RecordReply:
    caller = caller_of(ctx)
    lines = None
    if grades is not None:
        lines = [
            entry_services.GradeLineInput(
                egg_grade_id=grade_selectors.egg_grade_resolve(
                    caller=caller, name_or_id=line.grade
                ).egg_grade_id,
                quantity=line.quantity,
            )
            for line in grades
        ]
    result = entry_services.daily_entry_record(
        caller=caller,
        flock_id=_flock_id_for_write(caller, flock),
        date=date,
        total_eggs=total_eggs,
        cracked_eggs=cracked_eggs,
        dirty_eggs=dirty_eggs,
        discarded_eggs=discarded_eggs,
        mortality_count=mortality_count,
        grades=lines,
    )
    return RecordReply(
        daily_entry_id=result.entry.pk,
        flock_name=result.entry.flock.name,
        date=result.entry.date,
        status=result.entry.status,
        created=result.created,
    )


class SubmitReply(Reply):
    daily_entry_id: int
    flock_name: str
    date: dt.date
    status: str


class SubmitConfirmation(BaseModel):
    """The one-question form shown before an irreversible submit."""

    confirm: bool = Field(
        title="Submit now?",
        description="Yes puts these eggs in stock now; the entry can then not be edited here.",
    )


def _figures(entry: entry_selectors.DailyEntryView) -> str:
    graded = ", ".join(f"{line.grade_name} {line.quantity}" for line in entry.grades) or "none"
    return (
        f"Submit {entry.flock_name} ({entry.house_name}) for {entry.date.isoformat()}: "
        f"{entry.total_eggs} eggs collected ({entry.cracked_eggs} cracked, {entry.dirty_eggs} "
        f"dirty, {entry.discarded_eggs} discarded), graded: {graded}; "
        f"{entry.mortality_count} birds died. Submitting puts the eggs in stock and cannot be "
        "undone here."
    )


def _confirm_submit(ctx: CallContext, caller: Caller, daily_entry_id: int) -> None:
    """Ask the user to confirm the Draft's figures (only when the client can ask).

    The question's key carries the entry's version: a yes given to other figures (the draft
    was edited between the rounds) is not a yes to these, so the user is asked again. The
    answer travels with the signed, one-time request state bound to this call's arguments.

    Raises:
        ToolError: ``DailyEntry.SubmitNotConfirmed`` when the user declines (nothing changes).
    """
    draft = entry_selectors.daily_entry_get(caller=caller, entry_id=daily_entry_id)
    if draft.status != "Draft":
        return  # the service answers that one; there is nothing to confirm
    answer = ctx.elicit(
        f"confirm-submit-v{draft.version}", message=_figures(draft), schema=SubmitConfirmation
    )
    if not (
        answer.accepted
        and isinstance(answer.content, SubmitConfirmation)
        and answer.content.confirm
    ):
        raise ToolError(
            "DailyEntry.SubmitNotConfirmed",
            "The user did not confirm the figures; nothing was submitted. Correct the draft "
            "with cluck_record_daily_entry or submit again when they agree.",
            {"dailyEntryId": daily_entry_id},
        )


@tool(
    name="cluck_submit_daily_entry",
    errors={
        "DailyEntry.NotFound": "No daily entry you can access has that id.",
        "DailyEntry.NotDraft": "The entry was already submitted.",
        **ENTRY_CHECKS,
        "DailyEntry.GradesNotReconciled": "Graded eggs must equal total − cracked − dirty − "
        "discarded (data.graded, data.sellable).",
        "DailyEntry.VersionConflict": "Another writer changed the entry meanwhile; reload "
        "and retry.",
        "DailyEntry.SubmitNotConfirmed": "Your client asked the user to confirm the figures "
        "and they did not; nothing was submitted.",
    },
    policy=PRODUCTION_WRITE,
    mirrors="daily-entry-submit",
    title="Submit a daily entry",
    description=(
        "Submit a Draft daily entry (from cluck_record_daily_entry): its graded eggs must add "
        "up exactly to total minus cracked, dirty and discarded. Submitting puts the eggs in "
        "stock (one lot per grade) and records mortality; the entry can then no longer be "
        "edited here. When your client can ask the user, they are shown the figures and must "
        "confirm first (DailyEntry.SubmitNotConfirmed if they do not)."
    ),
)
def submit_daily_entry(ctx: CallContext, *, daily_entry_id: int) -> SubmitReply:
    caller = caller_of(ctx)
    if ctx.client_supports("elicitation"):
        _confirm_submit(ctx, caller, daily_entry_id)
    entry = entry_services.daily_entry_submit(caller=caller, entry_id=daily_entry_id)
    view = entry_selectors.daily_entry_get(caller=caller, entry_id=entry.pk)
    return SubmitReply(
        daily_entry_id=view.entry_id, flock_name=view.flock_name, date=view.date, status=view.status
    )
