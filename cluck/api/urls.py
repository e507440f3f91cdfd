"""Farm routes under /api/v1/. Route names are interfaces (MCP parity checks key on them)."""

from django.urls import URLPattern, URLResolver, include, path

from cluck.api import production as views
from cluck.api.base import MethodRoutes

daily_entries = MethodRoutes(
    get=("daily-entry-list", views.DailyEntryListApi),
    post=("daily-entry-record", views.DailyEntryRecordApi),
)

urlpatterns: list[URLPattern | URLResolver] = [
    path("flocks/", views.FlockListApi.as_view(), name="flock-list"),
    path("flocks/<int:flock_id>/", views.FlockDetailApi.as_view(), name="flock-detail"),
    path("egg-grades/", views.EggGradeListApi.as_view(), name="egg-grade-list"),
    path("stock/", views.StockSummaryApi.as_view(), name="stock-summary"),
    *daily_entries.patterns("daily-entries/"),
    path(
        "daily-entries/<int:entry_id>/",
        views.DailyEntryDetailApi.as_view(),
        name="daily-entry-detail",
    ),
    path(
        "daily-entries/<int:entry_id>/submit/",
        views.DailyEntrySubmitApi.as_view(),
        name="daily-entry-submit",
    ),
    path("", include("cluck.api.commerce_urls")),
]
