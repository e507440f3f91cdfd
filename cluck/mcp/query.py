"""The farm's query tool (``mcp_tools.query``): structured questions over its records.

Declared fields only; the rest of each model (versions, timestamps of bookkeeping, customers'
contact details) does not exist for the agent. Workers are left out: their reach is their
assigned flocks (a row scope the tool does not apply), so the models open to the roles whose
reach is the whole farm.
"""

from __future__ import annotations

from mcp_tools.query import QueryModel, query_tool
from tenancy import Policy

FARM_WIDE: Policy = Policy("QueryFarmWide", {"Owner", "Manager", "ReadOnly"})
FARM_SALES: Policy = Policy("QuerySales", {"Owner", "Manager", "Sales"})
PRICES: Policy = Policy("QueryPrices", {"Owner", "Manager", "Sales"})

QUERY = query_tool(
    name="cluck_query",
    title="Query farm records",
    description=(
        "Ask the farm's records a structured question: one model, filters, ordering, groupBy "
        "(a date by day/week/month) and aggregates (count/sum/avg/min/max), a page at a time. "
        "Eggs per house per week: model egg_entries, groupBy house__name and date by week, "
        "aggregate sum of total_eggs."
    ),
    policy=Policy("QueryAny", {"Owner", "Manager", "ReadOnly", "Sales"}),
    max_rows=200,
    statement_timeout_ms=2_000,
    models=[
        QueryModel(
            "cluck.DailyEntry",
            name="egg_entries",
            description="one per flock per day",
            policy=FARM_WIDE,
            fields=[
                "date",
                "status",
                "total_eggs",
                "cracked_eggs",
                "dirty_eggs",
                "discarded_eggs",
                "mortality_count",
                "submitted_at",
                "house",
                "house__name",
                "flock",
                "flock__name",
            ],
        ),
        QueryModel(
            "cluck.Flock",
            name="flocks",
            policy=FARM_WIDE,
            fields=[
                "name",
                "breed",
                "status",
                "placement_date",
                "initial_count",
                "depleted_on",
                "house",
                "house__name",
            ],
        ),
        QueryModel("cluck.House", name="houses", policy=FARM_WIDE, fields=["name"]),
        QueryModel(
            "cluck.EggLot",
            name="egg_lots",
            policy=FARM_WIDE,
            fields=[
                "production_date",
                "quantity_produced",
                "quantity_available",
                "grade__name",
                "flock__name",
            ],
        ),
        QueryModel(
            "cluck.EggGrade",
            name="egg_grades",
            policy=Policy("QueryGrades", {"Owner", "Manager", "ReadOnly", "Sales"}),
            fields=["name", "grade_type", "kind", "is_saleable", "is_active", "unit_price_minor"],
            restricted={"unit_price_minor": PRICES},
        ),
        QueryModel(
            "cluck.SalesOrder",
            name="sales_orders",
            policy=FARM_SALES,
            fields=[
                "reference_number",
                "status",
                "order_date",
                "total_minor",
                "currency_code",
                "customer__name",
            ],
        ),
        QueryModel("cluck.Customer", name="customers", policy=FARM_SALES, fields=["name"]),
    ],
)
