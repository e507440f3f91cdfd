"""REST adapters for the production half of the farm: flocks, egg grades, stock, daily
entries. Thin: parse the request's types, call one service or selector, render the result.

Every domain rule (the daily-entry validator included) lives in ``cluck.services`` /
``cluck.selectors``; serializers here only parse types (a non-integer ``totalEggs`` is DRF's
400). Field names on the wire are camelCase.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cluck.api.base import ListQuerySerializer, caller_of, decode_cursor
from cluck.api.shapes import (
    DB_ID_MAX,
    MoneyField,
    TieredMoneyMixin,
)
from cluck.api.shapes import page_response as _page
from cluck.api.shapes import page_serializer as _page_serializer
from cluck.api.shapes import problem_responses as _problems
from cluck.models import DailyEntry, EggGrade, Flock
from cluck.roles import ProductionWrite
from cluck.selectors.daily_entries import (
    ENTRY_CURSOR_KEYS,
    daily_entry_get,
    daily_entry_list,
)
from cluck.selectors.flocks import FLOCK_CURSOR_KEYS, flock_get, flock_list
from cluck.selectors.grades import GRADE_CURSOR_KEYS, egg_grade_list
from cluck.selectors.stock import stock_summary
from cluck.services.daily_entries import (
    GradeLineInput,
    daily_entry_record,
    daily_entry_submit,
)
from tenancy.permissions import IsTenantMember

TAG_FLOCKS = "flocks"
TAG_GRADES = "egg grades"
TAG_STOCK = "stock"
TAG_ENTRIES = "daily entries"


# --- flocks ------------------------------------------------------------------------------------


class FlockOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="flock_id")
    name = serializers.CharField()
    breed = serializers.CharField()
    status = serializers.ChoiceField(choices=Flock.Status.choices)
    houseId = serializers.IntegerField(source="house_id")
    house = serializers.CharField(source="house_name")
    placementDate = serializers.DateField(source="placement_date")
    initialCount = serializers.IntegerField(source="initial_count")
    birdsAlive = serializers.IntegerField(
        source="birds_alive", help_text="Initial count − Σ bird movements (mortality, culls)."
    )
    depletedOn = serializers.DateField(source="depleted_on", allow_null=True)
    archivedOn = serializers.DateField(source="archived_on", allow_null=True)
    acceptsProductionToday = serializers.BooleanField(
        source="accepts_production_today",
        help_text="Whether a daily entry may be recorded for the farm's today.",
    )


class FlockListApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    class InputSerializer(ListQuerySerializer):
        status = serializers.ChoiceField(choices=Flock.Status.choices, required=False)

    @extend_schema(
        operation_id="flock-list",
        tags=[TAG_FLOCKS],
        summary="Flocks the caller may see, by name then id (names may repeat).",
        description="A Worker with flock assignments sees only the assigned flocks.",
        parameters=[InputSerializer],
        responses={200: _page_serializer("FlockPage", FlockOutputSerializer), **_problems(400)},
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        page = flock_list(
            caller=caller_of(request),
            status=data.get("status"),
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=FLOCK_CURSOR_KEYS),
        )
        return Response(_page(page, FlockOutputSerializer))


class FlockDetailApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    @extend_schema(
        operation_id="flock-detail",
        tags=[TAG_FLOCKS],
        summary="One flock.",
        responses={200: FlockOutputSerializer, **_problems(404)},
    )
    def get(self, request: Request, flock_id: int) -> Response:
        view = flock_get(caller=caller_of(request), flock_id=flock_id)
        return Response(FlockOutputSerializer(view).data)


# --- egg grades --------------------------------------------------------------------------------


class EggGradeOutputSerializer(TieredMoneyMixin, serializers.Serializer[Any]):
    id = serializers.IntegerField(source="egg_grade_id")
    name = serializers.CharField()
    gradeType = serializers.ChoiceField(source="grade_type", choices=EggGrade.GradeType.choices)
    kind = serializers.ChoiceField(
        choices=EggGrade.Kind.choices,
        help_text="Manual: graded by hand on entry lines; Cracked/Dirty: fed by the counters.",
    )
    sortOrder = serializers.IntegerField(source="sort_order")
    saleable = serializers.BooleanField(source="is_saleable")
    active = serializers.BooleanField(source="is_active")
    recordable = serializers.BooleanField(
        source="is_recordable", help_text="May appear on a daily entry's grade lines."
    )
    unitPrice = MoneyField(
        source="unit_price",
        required=False,
        help_text="List price per egg. Only for callers passing SalesAccess.",
    )


class EggGradeListApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    @extend_schema(
        operation_id="egg-grade-list",
        tags=[TAG_GRADES],
        summary="The farm's egg grades in display order.",
        parameters=[ListQuerySerializer],
        responses={
            200: _page_serializer("EggGradePage", EggGradeOutputSerializer),
            **_problems(400),
        },
    )
    def get(self, request: Request) -> Response:
        query = ListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        page = egg_grade_list(
            caller=caller_of(request),
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=GRADE_CURSOR_KEYS),
        )
        return Response(_page(page, EggGradeOutputSerializer))


# --- stock -------------------------------------------------------------------------------------


class StockLineOutputSerializer(serializers.Serializer[Any]):
    eggGradeId = serializers.IntegerField(source="egg_grade_id")
    gradeName = serializers.CharField(source="grade_name")
    available = serializers.IntegerField(help_text="Eggs that may be sold as of the date.")
    restricted = serializers.IntegerField(help_text="Eggs held back by a withdrawal restriction.")


class StockSummaryOutputSerializer(serializers.Serializer[Any]):
    asOfDate = serializers.DateField(source="as_of")
    items = StockLineOutputSerializer(many=True, source="lines")
    complete = serializers.BooleanField()


class StockSummaryApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    class InputSerializer(serializers.Serializer[Any]):
        asOfDate = serializers.DateField(
            required=False, help_text="Farm-calendar date; default: the farm's today."
        )

    @extend_schema(
        operation_id="stock-summary",
        tags=[TAG_STOCK],
        summary="Eggs in stock per grade: available and restricted, as of a date.",
        description=(
            "Counts lots produced on or before `asOfDate`; `available` excludes restricted "
            "lots. A Worker with flock assignments sees only their flocks' lots."
        ),
        parameters=[InputSerializer],
        responses={200: StockSummaryOutputSerializer, **_problems(400)},
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        summary = stock_summary(
            caller=caller_of(request), as_of=query.validated_data.get("asOfDate")
        )
        return Response(StockSummaryOutputSerializer(summary).data)


# --- daily entries -----------------------------------------------------------------------------


class GradeLineOutputSerializer(serializers.Serializer[Any]):
    eggGradeId = serializers.IntegerField(source="egg_grade_id")
    gradeName = serializers.CharField(source="grade_name")
    quantity = serializers.IntegerField(help_text="Eggs.")


class DailyEntryOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="entry_id")
    flockId = serializers.IntegerField(source="flock_id")
    flockName = serializers.CharField(source="flock_name")
    houseId = serializers.IntegerField(source="house_id")
    houseName = serializers.CharField(source="house_name")
    date = serializers.DateField()
    status = serializers.ChoiceField(choices=DailyEntry.Status.choices)
    totalEggs = serializers.IntegerField(source="total_eggs")
    crackedEggs = serializers.IntegerField(source="cracked_eggs")
    dirtyEggs = serializers.IntegerField(source="dirty_eggs")
    discardedEggs = serializers.IntegerField(source="discarded_eggs")
    sellableEggs = serializers.IntegerField(
        source="sellable_eggs", help_text="total − cracked − dirty − discarded."
    )
    gradedEggs = serializers.IntegerField(source="graded_eggs", help_text="Σ grade lines.")
    mortalityCount = serializers.IntegerField(source="mortality_count")
    grades = GradeLineOutputSerializer(many=True)
    version = serializers.IntegerField()
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    submittedAt = serializers.DateTimeField(source="submitted_at", allow_null=True)


class DailyEntryListApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    class InputSerializer(ListQuerySerializer):
        flock = serializers.IntegerField(
            required=False, min_value=1, max_value=DB_ID_MAX, help_text="Flock id."
        )
        fromDate = serializers.DateField(required=False, help_text="On or after.")
        toDate = serializers.DateField(required=False, help_text="On or before.")

    @extend_schema(
        operation_id="daily-entry-list",
        tags=[TAG_ENTRIES],
        summary="Daily entries, newest first (date, then id).",
        parameters=[InputSerializer],
        responses={
            200: _page_serializer("DailyEntryPage", DailyEntryOutputSerializer),
            **_problems(400),
        },
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        page = daily_entry_list(
            caller=caller_of(request),
            flock_id=data.get("flock"),
            from_date=data.get("fromDate"),
            to_date=data.get("toDate"),
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=ENTRY_CURSOR_KEYS),
        )
        return Response(_page(page, DailyEntryOutputSerializer))


class GradeLineInputSerializer(serializers.Serializer[Any]):
    # Content rules (present, positive, unique, within the sellable count) are the service's,
    # so every failing line is reported together with its DailyEntry.* code.
    eggGradeId = serializers.IntegerField(required=False, allow_null=True)
    quantity = serializers.IntegerField(help_text="Eggs, > 0.")


class DailyEntryRecordOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    created = serializers.BooleanField(
        help_text="True: a new Draft was created; false: the day's existing Draft was updated."
    )


class DailyEntryRecordApi(APIView):
    permission_classes: list[type[BasePermission]] = [ProductionWrite]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "DailyEntryRecordInput"

        # Presence of ids and date is checked by the service (DailyEntry.*.Required codes).
        flockId = serializers.IntegerField(required=False, allow_null=True)
        houseId = serializers.IntegerField(
            required=False, allow_null=True, help_text="Default: the flock's house."
        )
        date = serializers.DateField(
            required=False, allow_null=True, help_text="Farm-calendar date, not in the future."
        )
        totalEggs = serializers.IntegerField()
        crackedEggs = serializers.IntegerField()
        dirtyEggs = serializers.IntegerField()
        discardedEggs = serializers.IntegerField(required=False, default=0)
        mortalityCount = serializers.IntegerField()
        grades = serializers.ListField(
            child=GradeLineInputSerializer(),
            required=False,
            allow_null=True,
            help_text="Omitted or null: keep the draft's lines; []: clear them; a list: replace.",
        )

    @extend_schema(
        operation_id="daily-entry-record",
        tags=[TAG_ENTRIES],
        summary="Record a flock's day: create its Draft or update the day's existing Draft.",
        description=(
            "Upserts on (farm, house, flock, date). Recording leaves a Draft; submit it to put "
            "the eggs in stock. 201 with `Location` when a Draft was created, 200 when the "
            "existing Draft was updated. The date lies between the flock's placement "
            "(`DailyEntry.DateBeforePlacement`, 422) and the farm's today "
            "(`DailyEntry.Date.NotFuture`, 400), within the farm's late-entry grace "
            "(`DailyEntry.Date.TooOld`, 400); mortality never exceeds the birds alive "
            "(`DailyEntry.MortalityExceedsBirdsAlive`, 422, checked again at submit)."
        ),
        request=InputSerializer,
        responses={
            201: DailyEntryRecordOutputSerializer,
            200: DailyEntryRecordOutputSerializer,
            **_problems(400, 404, 409, 422),
        },
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        grades = data.get("grades")
        result = daily_entry_record(
            caller=caller_of(request),
            flock_id=data.get("flockId"),
            house_id=data.get("houseId"),
            date=data.get("date"),
            total_eggs=data["totalEggs"],
            cracked_eggs=data["crackedEggs"],
            dirty_eggs=data["dirtyEggs"],
            discarded_eggs=data["discardedEggs"],
            mortality_count=data["mortalityCount"],
            grades=None
            if grades is None
            else [
                GradeLineInput(egg_grade_id=line.get("eggGradeId"), quantity=line["quantity"])
                for line in grades
            ],
        )
        payload = {"id": result.entry.pk, "created": result.created}
        if not result.created:
            return Response(payload, status=status.HTTP_200_OK)
        location = reverse("daily-entry-detail", args=[result.entry.pk])
        return Response(payload, status=status.HTTP_201_CREATED, headers={"Location": location})


class DailyEntryDetailApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    @extend_schema(
        operation_id="daily-entry-detail",
        tags=[TAG_ENTRIES],
        summary="One daily entry with its grade lines.",
        responses={200: DailyEntryOutputSerializer, **_problems(404)},
    )
    def get(self, request: Request, entry_id: int) -> Response:
        view = daily_entry_get(caller=caller_of(request), entry_id=entry_id)
        return Response(DailyEntryOutputSerializer(view).data)


class DailyEntrySubmitApi(APIView):
    permission_classes: list[type[BasePermission]] = [ProductionWrite]

    @extend_schema(
        operation_id="daily-entry-submit",
        tags=[TAG_ENTRIES],
        summary="Submit a Draft: its graded eggs become stock, its mortality leaves the flock.",
        description="Grade lines must add up exactly to total − cracked − dirty − discarded.",
        request=None,
        responses={200: DailyEntryOutputSerializer, **_problems(404, 409, 422)},
    )
    def post(self, request: Request, entry_id: int) -> Response:
        caller = caller_of(request)
        entry = daily_entry_submit(caller=caller, entry_id=entry_id)
        return Response(
            DailyEntryOutputSerializer(daily_entry_get(caller=caller, entry_id=entry.pk)).data
        )
