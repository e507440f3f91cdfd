"""REST adapters for the commerce half of the farm: customers, sales orders, payments,
receivables. Thin: parse the request shape, call one service or selector, render the result.

Money is rendered once, here, as ``{"amount": "<decimal string>", "currency": "<ISO>"}``;
no response carries an integer minor-unit field. Every money field of an order (``total``,
the lines' ``unitPrice``/``lineTotal``, ``paid``, ``outstanding``) is included only for
callers passing ``SALES_ACCESS`` — the selector decides (``Caller.sees_money``), the same rule
the MCP tools follow; a Worker may sell (``SALES_FLOW``) but sees no money.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
)
from rest_framework import serializers, status
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
from cluck.models import Payment, SalesOrder
from cluck.roles import SalesAccess, SalesFlow
from cluck.selectors.customers import CUSTOMER_CURSOR_KEYS, customer_get, customer_list
from cluck.selectors.orders import ORDER_CURSOR_KEYS, sales_order_get, sales_order_list
from cluck.selectors.receivables import (
    BALANCE_CURSOR_KEYS,
    customer_balance_page,
    order_payments,
    payment_view,
)
from cluck.services.customers import customer_create
from cluck.services.orders import (
    MAX_LINE_QUANTITY,
    MAX_ORDER_LINES,
    OrderLineInput,
    sales_order_confirm,
    sales_order_create,
)
from cluck.services.payments import payment_record

AMOUNT_PATTERN = r"^[0-9]{1,16}(\.[0-9]{1,4})?$"
TAG_CUSTOMERS = "customers"
TAG_ORDERS = "sales orders"
TAG_PAYMENTS = "payments"


# --- shared shapes ---------------------------------------------------------------------------


class AmountField(serializers.RegexField):
    """A money amount as a decimal *string* ("12.50"). JSON numbers are refused rather than
    coerced: a binary float has already lost the cents it claims to carry."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(AMOUNT_PATTERN, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


def _id_param(name: str, description: str) -> OpenApiParameter:
    """A primary key in the path: a positive integer (the URL converter matches digits only)."""
    return OpenApiParameter(
        name,
        {"type": "integer", "minimum": 1, "maximum": DB_ID_MAX},
        OpenApiParameter.PATH,
        description=description,
    )


CUSTOMER_ID = _id_param("customer_id", "Customer id.")
ORDER_ID = _id_param("order_id", "Sales order id.")


# --- customers -------------------------------------------------------------------------------


class CustomerOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    phone = serializers.CharField()
    email = serializers.CharField(allow_null=True)
    address = serializers.CharField(allow_null=True)
    note = serializers.CharField(allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class CustomerListApi(APIView):
    permission_classes = [SalesFlow]

    class InputSerializer(ListQuerySerializer):
        search = serializers.CharField(
            required=False, max_length=200, help_text="Name contains (case-insensitive)."
        )

    @extend_schema(
        operation_id="customer-list",
        tags=[TAG_CUSTOMERS],
        summary="Customers of the farm by name, keyset-paged.",
        parameters=[InputSerializer],
        responses={
            200: _page_serializer("CustomerPage", CustomerOutputSerializer),
            **_problems(400),
        },
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        page = customer_list(
            caller=caller_of(request),
            search=data.get("search"),
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=CUSTOMER_CURSOR_KEYS),
        )
        return Response(_page(page, CustomerOutputSerializer))


class CustomerCreateApi(APIView):
    permission_classes = [SalesFlow]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "CustomerCreateInput"

        # Content rules (required, lengths, email format) are the service's, so that every
        # failing field is reported together with its Customer.* code.
        name = serializers.CharField(allow_blank=True, allow_null=True, help_text="≤ 200.")
        phone = serializers.CharField(allow_blank=True, allow_null=True, help_text="≤ 50.")
        email = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="≤ 254."
        )
        address = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="≤ 500."
        )
        note = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="≤ 1000."
        )

    @extend_schema(
        operation_id="customer-create",
        tags=[TAG_CUSTOMERS],
        summary="Create a customer (blank optional fields become null).",
        request=InputSerializer,
        responses={201: CustomerOutputSerializer, **_problems(400)},
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        customer = customer_create(caller=caller_of(request), **body.validated_data)
        return Response(CustomerOutputSerializer(customer).data, status=status.HTTP_201_CREATED)


class CustomerDetailApi(APIView):
    permission_classes = [SalesFlow]

    @extend_schema(
        operation_id="customer-detail",
        parameters=[CUSTOMER_ID],
        tags=[TAG_CUSTOMERS],
        summary="One customer.",
        responses={200: CustomerOutputSerializer, **_problems(404)},
    )
    def get(self, request: Request, customer_id: int) -> Response:
        customer = customer_get(caller=caller_of(request), customer_id=customer_id)
        return Response(CustomerOutputSerializer(customer).data)


class CustomerBalanceOutputSerializer(serializers.Serializer[Any]):
    customerId = serializers.IntegerField(source="customer_id")
    customerName = serializers.CharField(source="customer_name")
    confirmedTotal = MoneyField(source="confirmed_total")
    paid = MoneyField()
    outstanding = MoneyField()


class CustomerBalanceListApi(APIView):
    permission_classes = [SalesAccess]

    class InputSerializer(ListQuerySerializer):
        owingOnly = serializers.BooleanField(
            required=False, default=False, help_text="Only customers who owe money."
        )

    @extend_schema(
        operation_id="customer-balance-list",
        tags=[TAG_PAYMENTS],
        summary="Receivables: per customer, Σ confirmed orders − Σ non-voided payments.",
        description="Paged in SQL by customer name then id; money in the farm's currency.",
        parameters=[InputSerializer],
        responses={
            200: _page_serializer("CustomerBalancePage", CustomerBalanceOutputSerializer),
            **_problems(400),
        },
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        page = customer_balance_page(
            caller=caller_of(request),
            owing_only=data["owingOnly"],
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=BALANCE_CURSOR_KEYS),
        )
        return Response(_page(page, CustomerBalanceOutputSerializer))


# --- sales orders ----------------------------------------------------------------------------


_MONEY_TIER = "Only for callers passing SalesAccess."


class OrderLineOutputSerializer(TieredMoneyMixin, serializers.Serializer[Any]):
    id = serializers.IntegerField(source="line_id")
    eggGradeId = serializers.IntegerField(source="egg_grade_id")
    gradeName = serializers.CharField(source="grade_name")
    quantity = serializers.IntegerField(help_text="Eggs.")
    unitPrice = MoneyField(source="unit_price", required=False, help_text=_MONEY_TIER)
    lineTotal = MoneyField(source="line_total", required=False, help_text=_MONEY_TIER)


class OrderOutputSerializer(TieredMoneyMixin, serializers.Serializer[Any]):
    id = serializers.IntegerField(source="order_id")
    referenceNumber = serializers.CharField(source="reference_number")
    customerId = serializers.IntegerField(source="customer_id")
    customerName = serializers.CharField(source="customer_name")
    status = serializers.ChoiceField(choices=SalesOrder.Status.choices)
    orderDate = serializers.DateField(source="order_date")
    total = MoneyField(required=False, help_text=_MONEY_TIER)
    createdAt = serializers.DateTimeField(source="created_at")
    confirmedAt = serializers.DateTimeField(source="confirmed_at", allow_null=True)
    paid = MoneyField(
        source="settlement.paid",
        required=False,
        help_text="Σ non-voided payments. Only for callers passing SalesAccess.",
    )
    outstanding = MoneyField(
        source="settlement.outstanding",
        required=False,
        allow_null=True,
        help_text="Total − paid; null unless Confirmed. Only for callers passing SalesAccess.",
    )


class OrderDetailOutputSerializer(OrderOutputSerializer):
    lines = OrderLineOutputSerializer(many=True)


class SalesOrderListApi(APIView):
    permission_classes = [SalesFlow]

    class InputSerializer(ListQuerySerializer):
        status = serializers.ChoiceField(choices=SalesOrder.Status.choices, required=False)
        customer = serializers.IntegerField(
            required=False, min_value=1, max_value=DB_ID_MAX, help_text="Customer id."
        )
        fromDate = serializers.DateField(required=False, help_text="Order date on or after.")
        toDate = serializers.DateField(required=False, help_text="Order date on or before.")

    @extend_schema(
        operation_id="sales-order-list",
        tags=[TAG_ORDERS],
        summary="Sales orders, newest first (order date, then id).",
        parameters=[InputSerializer],
        responses={
            200: _page_serializer("SalesOrderPage", OrderOutputSerializer),
            **_problems(400),
        },
    )
    def get(self, request: Request) -> Response:
        query = self.InputSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        caller = caller_of(request)
        page = sales_order_list(
            caller=caller,
            status=data.get("status"),
            customer_id=data.get("customer"),
            from_date=data.get("fromDate"),
            to_date=data.get("toDate"),
            limit=data["limit"],
            cursor_position=decode_cursor(data.get("cursor"), keys=ORDER_CURSOR_KEYS),
        )
        return Response(_page(page, OrderOutputSerializer))


class OrderLineInputSerializer(serializers.Serializer[Any]):
    eggGradeId = serializers.IntegerField(min_value=1, max_value=DB_ID_MAX)
    quantity = serializers.IntegerField(min_value=1, max_value=MAX_LINE_QUANTITY, help_text="Eggs.")
    unitPrice = AmountField(
        required=False,
        help_text='Per egg, decimal string ("12.50"); default: the grade\'s list price.',
    )


class SalesOrderCreateApi(APIView):
    permission_classes = [SalesFlow]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "SalesOrderCreateInput"

        customerId = serializers.IntegerField(min_value=1, max_value=DB_ID_MAX)
        orderDate = serializers.DateField(required=False, help_text="Default: the farm's today.")
        lines = OrderLineInputSerializer(many=True, max_length=MAX_ORDER_LINES)  # type: ignore[call-arg]

    @extend_schema(
        operation_id="sales-order-create",
        tags=[TAG_ORDERS],
        summary="Create a Draft order; prices are snapshot in the farm's currency.",
        description=(
            "`orderDate` (default: the farm's today) lies within the farm's late-entry grace "
            "(its `late_entry_days`, default 366) up to its today: "
            "`SalesOrder.OrderDate.InFuture`, `SalesOrder.OrderDate.TooOld` (400)."
        ),
        request=InputSerializer,
        responses={201: OrderDetailOutputSerializer, **_problems(400, 404, 409)},
    )
    def post(self, request: Request) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        caller = caller_of(request)
        order = sales_order_create(
            caller=caller,
            customer_id=data["customerId"],
            order_date=data.get("orderDate"),
            lines=[
                OrderLineInput(
                    egg_grade_id=line["eggGradeId"],
                    quantity=line["quantity"],
                    unit_price=line.get("unitPrice"),
                )
                for line in data["lines"]
            ],
        )
        view = sales_order_get(caller=caller, order_id=order.pk)
        return Response(OrderDetailOutputSerializer(view).data, status=status.HTTP_201_CREATED)


class SalesOrderDetailApi(APIView):
    permission_classes = [SalesFlow]

    @extend_schema(
        operation_id="sales-order-detail",
        parameters=[ORDER_ID],
        tags=[TAG_ORDERS],
        summary="One order with its lines.",
        responses={200: OrderDetailOutputSerializer, **_problems(404)},
    )
    def get(self, request: Request, order_id: int) -> Response:
        caller = caller_of(request)
        view = sales_order_get(caller=caller, order_id=order_id)
        return Response(OrderDetailOutputSerializer(view).data)


class SalesOrderConfirmApi(APIView):
    permission_classes = [SalesFlow]

    @extend_schema(
        operation_id="sales-order-confirm",
        parameters=[ORDER_ID],
        tags=[TAG_ORDERS],
        summary="Confirm a Draft: allocate stock FIFO (oldest lots first), all or nothing.",
        description=(
            "`SalesOrder.NotDraft` (409) unless Draft; `SalesOrder.NoItems` (422) without lines; "
            "`SalesOrder.InsufficientStock` (422, `shortages` per grade) when sellable stock "
            "(produced by today, not restricted) does not cover the order."
        ),
        request=None,
        responses={200: OrderDetailOutputSerializer, **_problems(400, 404, 409, 422)},
    )
    def post(self, request: Request, order_id: int) -> Response:
        caller = caller_of(request)
        sales_order_confirm(caller=caller, order_id=order_id)
        view = sales_order_get(caller=caller, order_id=order_id)
        return Response(OrderDetailOutputSerializer(view).data)


# --- payments --------------------------------------------------------------------------------


class PaymentOutputSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="payment_id")
    paymentDate = serializers.DateField(source="payment_date")
    amount = MoneyField()
    method = serializers.ChoiceField(choices=Payment.Method.choices)
    referenceNumber = serializers.CharField(source="reference_number", allow_null=True)
    note = serializers.CharField(allow_null=True)
    voided = serializers.BooleanField()
    voidReason = serializers.CharField(source="void_reason", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class OrderPaymentsOutputSerializer(serializers.Serializer[Any]):
    orderId = serializers.IntegerField(source="order_id")
    referenceNumber = serializers.CharField(source="reference_number")
    status = serializers.ChoiceField(choices=SalesOrder.Status.choices)
    currency = serializers.CharField()
    total = MoneyField()
    paid = MoneyField()
    outstanding = MoneyField(allow_null=True, help_text="Null unless the order is Confirmed.")
    items = PaymentOutputSerializer(many=True)
    complete = serializers.BooleanField(help_text="False if the order has over 500 payments.")


class OrderPaymentListApi(APIView):
    permission_classes = [SalesAccess]

    @extend_schema(
        operation_id="order-payment-list",
        parameters=[ORDER_ID],
        tags=[TAG_PAYMENTS],
        summary="An order's payments (voided ones flagged), paid and outstanding.",
        responses={200: OrderPaymentsOutputSerializer, **_problems(404)},
    )
    def get(self, request: Request, order_id: int) -> Response:
        result = order_payments(caller=caller_of(request), order_id=order_id)
        return Response(OrderPaymentsOutputSerializer(result).data)


class PaymentRecordApi(APIView):
    permission_classes = [SalesAccess]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "PaymentRecordInput"

        amount = AmountField(help_text='Decimal string in the order\'s currency: "100.00".')
        paymentDate = serializers.DateField(
            required=False, help_text="Default: the farm's today; not in the future."
        )
        method = serializers.ChoiceField(choices=Payment.Method.choices)
        referenceNumber = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="≤ 50."
        )
        note = serializers.CharField(
            required=False, allow_blank=True, allow_null=True, help_text="≤ 500."
        )

    @extend_schema(
        operation_id="payment-record",
        parameters=[ORDER_ID],
        tags=[TAG_PAYMENTS],
        summary="Record a payment against a Confirmed order (no overpayment).",
        description=(
            "`Payment.OrderNotConfirmed` (422) unless Confirmed; `Payment.Overpayment` (422, "
            "`outstanding`) when the amount exceeds what is still owed. `paymentDate` lies "
            "within the farm's late-entry grace up to its today: "
            "`Payment.PaymentDate.InFuture`, `Payment.PaymentDate.TooOld` (400)."
        ),
        request=InputSerializer,
        responses={201: PaymentOutputSerializer, **_problems(400, 404, 422)},
    )
    def post(self, request: Request, order_id: int) -> Response:
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        caller = caller_of(request)
        payment = payment_record(
            caller=caller,
            order_id=order_id,
            amount=data["amount"],
            method=data["method"],
            payment_date=data.get("paymentDate"),
            reference_number=data.get("referenceNumber"),
            note=data.get("note"),
        )
        return Response(
            PaymentOutputSerializer(payment_view(payment)).data, status=status.HTTP_201_CREATED
        )
