"""docs/operating.md names the metrics that exist, and its PromQL queries only what they carry.

An operator copies the dashboard queries and alert rules as they are: a renamed series or a
dropped label would leave a panel empty and an alert silent, without any error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_tools.observability import metrics
from tests.mutations import mutation

OPERATING = Path(__file__).resolve().parents[2] / "docs" / "operating.md"
# A series name of ours, anywhere in the page (tables, PromQL, alert rules).
SERIES = re.compile(r"\b(?:mcp_tools|idempotency|tenancy)_[a-z_]+_(?:total|seconds\w*)\b")
# Label matchers and grouping clauses inside a PromQL expression.
MATCHERS = re.compile(r"(\w+)\{([^}]*)\}")
GROUPING = re.compile(r"\bby \(([^)]*)\)")
HISTOGRAM_SUFFIXES = ("_bucket", "_count", "_sum")


def _exposed() -> dict[str, tuple[str, ...]]:
    """Every series name the instruments expose, with the labels it carries."""
    series: dict[str, tuple[str, ...]] = {}
    for name in vars(metrics.instruments()):
        instrument = getattr(metrics.instruments(), name)
        labels = tuple(instrument._labelnames)
        if instrument._type == "counter":
            series[f"{instrument._name}_total"] = labels
        else:
            series[instrument._name] = labels
            for suffix in HISTOGRAM_SUFFIXES:
                extra = ("le",) if suffix == "_bucket" else ()
                series[instrument._name + suffix] = labels + extra
    return series


def _section(title: str) -> str:
    text = OPERATING.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _queries() -> list[str]:
    """The PromQL of the dashboard table (its second column) and of the alert rules."""
    section = _section("Prometheus metrics")
    queries = [
        row.split(" | ")[1].strip("`| ")
        for row in section.splitlines()
        if row.startswith("| ") and "(" in row and " | `" in row and "rate(" in row
    ]
    queries += [line.split("expr:", 1)[1] for line in section.splitlines() if "expr:" in line]
    return queries


@mutation(
    "mcp_tools/observability/metrics.py",
    find='"idempotency_leases_stolen",',
    replace='"idempotency_leases_taken_over",',
)
def test_the_metrics_table_lists_every_metric_and_no_other():
    """Mutation: rename ``idempotency_leases_stolen`` in ``metrics.instruments`` → red."""
    rows = re.finditer(r"^\| `([a-z_]+)` \|", _section("Prometheus metrics"), re.MULTILINE)
    documented = {row.group(1) for row in rows}
    instruments = metrics.instruments()
    names = {
        f"{instrument._name}_total" if instrument._type == "counter" else instrument._name
        for instrument in (getattr(instruments, field) for field in vars(instruments))
    }
    assert documented == names


@mutation(
    "mcp_tools/observability/metrics.py",
    find='["protocol", "tool", "outcome", "code"],',
    replace='["protocol", "tool", "outcome"],',
)
@pytest.mark.parametrize("query", _queries())
def test_every_promql_query_reads_series_and_labels_that_exist(query: str):
    """Mutation: drop the ``code`` label from ``mcp_tools_calls`` → red (the tool error panel and
    the crash alert select on it)."""
    exposed = _exposed()
    used = set(SERIES.findall(query))
    assert used, f"no series of ours in {query!r}"
    assert used <= set(exposed), f"unknown series in {query!r}"
    for series, selector in MATCHERS.findall(query):
        for matcher in filter(None, (part.strip() for part in selector.split(","))):
            label = re.split(r"[=!~]", matcher, maxsplit=1)[0]
            assert label in exposed[series], f"{series} has no label {label!r}: {query!r}"
    labels_of_query = set().union(*(exposed[series] for series in used))
    for clause in GROUPING.findall(query):
        for label in (part.strip() for part in clause.split(",")):
            assert label in labels_of_query, f"no series in {query!r} has the label {label!r}"


@mutation(
    "mcp_tools/observability/metrics.py",
    find='"mcp_tools_bound_refusals",',
    replace='"mcp_tools_bounds_refused",',
)
def test_the_page_names_no_series_that_does_not_exist():
    """Prose and examples too. Mutation: rename ``mcp_tools_bound_refusals`` → red."""
    assert set(SERIES.findall(OPERATING.read_text())) <= set(_exposed())
