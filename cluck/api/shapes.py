"""REST shapes shared by every farm route: money, problem details, list pages.

One definition each, so the OpenAPI schema has one ``Money``, one ``Problem`` and one page
shape, whichever route module uses them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers

from cluck.api.base import encode_cursor, page_body
from cluck.money import Money, MoneyJSON
from cluck.selectors.paging import Page

DB_ID_MAX = 2**63 - 1
PROBLEM = "application/problem+json"

_PROBLEM_DESCRIPTIONS = {
    400: "Invalid request: every failing field is listed in `errors` with its code.",
    401: "Missing, invalid, expired or revoked bearer token.",
    403: "The caller's role does not pass this route's policy.",
    404: "Not found (ids of other farms read exactly like missing ids).",
    405: "Method not allowed.",
    409: "State conflict (see `code`).",
    422: "A domain rule refused the request (see `code`).",
}


class MoneySerializer(serializers.Serializer[Any]):
    amount = serializers.CharField(
        help_text='Decimal string with the currency\'s decimals: "28250.00".'
    )
    currency = serializers.CharField(help_text="ISO 4217 code.")


@extend_schema_field(MoneySerializer)
class MoneyField(serializers.Field):
    """Output only: a ``Money`` value → ``{amount, currency}``."""

    def to_representation(self, value: Money) -> MoneyJSON:
        return value.as_json()


class TieredMoneyMixin:
    """For output serializers of views that carry money only for the money tier
    (``Caller.sees_money``, decided by the selector): when the instance's ``money_visible``
    is false, every ``MoneyField`` is left out — absent, never null: the field is not the
    caller's to see, which is also how the MCP tools show it."""

    def to_representation(self, instance: Any) -> Any:
        data = super().to_representation(instance)  # type: ignore[misc]
        if not instance.money_visible:
            for name, field in self.fields.items():  # type: ignore[attr-defined]
                if isinstance(field, MoneyField):
                    data.pop(name, None)
        return data


class FieldProblemSerializer(serializers.Serializer[Any]):
    field = serializers.CharField()
    code = serializers.CharField()
    message = serializers.CharField()


class ProblemSerializer(serializers.Serializer[Any]):
    """RFC 9457 problem details with the stable machine ``code``."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()
    errors = FieldProblemSerializer(many=True, required=False)  # type: ignore[assignment]


def problem_responses(*statuses: int) -> dict[Any, Any]:
    """Problem-JSON responses: 401 and 403 on every route, plus ``statuses``."""
    return {
        (code, PROBLEM): OpenApiResponse(ProblemSerializer, description=_PROBLEM_DESCRIPTIONS[code])
        for code in sorted({401, 403, *statuses})
    }


def page_serializer(name: str, item: type[serializers.Serializer[Any]]) -> Any:
    """``{items, complete, nextCursor}`` around ``item``, named for the schema."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "items": item(many=True),
            "complete": serializers.BooleanField(),
            "nextCursor": serializers.CharField(allow_null=True),
        },
    )


def page_response(page: Page[Any], serializer: type[serializers.Serializer[Any]]) -> dict[str, Any]:
    """A selector's keyset page rendered as the list envelope."""
    cursor = encode_cursor(page.next_position) if page.next_position is not None else None
    return page_body(list(serializer(page.items, many=True).data), next_cursor=cursor)
