"""Payment writes. Payments are never deleted; mistakes are voided (not built yet)."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Sum

from cluck.caller import Caller
from cluck.errors import CluckError
from cluck.models import Payment, SalesOrder
from cluck.money import Money
from cluck.selectors.orders import SalesOrderNotFoundError
from cluck.selectors.paging import is_db_id
from cluck.services._fields import FieldErrors
from cluck.services.audit import audit_record

REFERENCE_MAX = 50
NOTE_MAX = 500


class PaymentOrderNotConfirmedError(CluckError):
    code = "Payment.OrderNotConfirmed"
    http_status = 422
    default_message = "Payments can only be recorded against a confirmed order."


class PaymentOverpaymentError(CluckError):
    """``data["outstanding"]``: what may still be paid, as money JSON."""

    code = "Payment.Overpayment"
    http_status = 422
    default_message = "The payment is more than the order's outstanding amount."


@transaction.atomic
def payment_record(
    *,
    caller: Caller,
    order_id: int,
    amount: str,
    method: str,
    payment_date: dt.date | None = None,
    reference_number: str | None = None,
    note: str | None = None,
) -> Payment:
    """Record a payment against a Confirmed order and audit ``Payment.Record``.

    ``amount`` is a decimal string in the order's currency, whose code and minor unit are
    copied onto the payment. The no-overpay rule (Σ non-voided payments ≤ order total) is
    checked while holding the order's row lock, so two concurrent payments cannot both fit.

    Raises:
        SalesOrderNotFoundError: missing, or on another farm.
        FieldError: every failing field (``amount``, ``method``, ``paymentDate``, …); the
            payment date lies within the farm's late-entry grace up to its today
            (``Payment.PaymentDate.InFuture``, ``Payment.PaymentDate.TooOld``).
        PaymentOrderNotConfirmedError: the order is not Confirmed (422).
        PaymentOverpaymentError: the amount exceeds what is outstanding (422).
    """
    if not is_db_id(order_id):
        raise SalesOrderNotFoundError()
    order = (
        SalesOrder.objects.for_tenant(caller.tenant).select_for_update().filter(pk=order_id).first()
    )
    if order is None:
        raise SalesOrderNotFoundError()
    today = caller.farm.today()
    errors = FieldErrors()
    amount_minor = errors.amount(
        amount,
        field="amount",
        code_prefix="Payment.Amount",
        minor_unit=order.currency_minor_unit,
        allow_zero=False,
        label="Amount",
    )
    if method not in Payment.Method.values:
        errors.add(
            "method",
            "Payment.Method.Invalid",
            f"method must be one of {', '.join(Payment.Method.values)}.",
        )
    paid_on = payment_date or today
    errors.not_future(
        paid_on,
        today=today,
        field="paymentDate",
        code="Payment.PaymentDate.InFuture",
        label="Payment date",
    )
    errors.not_too_old(
        paid_on,
        farm=caller.farm,
        today=today,
        field="paymentDate",
        code="Payment.PaymentDate.TooOld",
        label="Payment date",
    )
    clean_reference = errors.text(
        reference_number,
        field="referenceNumber",
        code_prefix="Payment.ReferenceNumber",
        max_length=REFERENCE_MAX,
        required=False,
        label="Reference number",
    )
    clean_note = errors.text(
        note,
        field="note",
        code_prefix="Payment.Note",
        max_length=NOTE_MAX,
        required=False,
        label="Note",
    )
    errors.raise_if_any()
    assert amount_minor is not None  # raise_if_any() raised otherwise
    if order.status != SalesOrder.Status.CONFIRMED:
        raise PaymentOrderNotConfirmedError(orderStatus=order.status)
    paid = (
        Payment.objects.for_tenant(caller.tenant)
        .filter(sales_order_id=order.pk, voided=False)
        .aggregate(total=Sum("amount_minor"))["total"]
        or 0
    )
    outstanding = order.total_minor - paid
    if amount_minor > outstanding:
        raise PaymentOverpaymentError(
            outstanding=Money(outstanding, order.currency_code, order.currency_minor_unit).as_json()
        )
    payment = Payment.objects.for_tenant(caller.tenant).create(
        farm=order.farm,
        sales_order=order,
        customer_id=order.customer_id,
        payment_date=paid_on,
        amount_minor=amount_minor,
        currency_code=order.currency_code,
        currency_minor_unit=order.currency_minor_unit,
        method=method,
        reference_number=clean_reference,
        note=clean_note,
    )
    audit_record(
        caller=caller,
        action="Payment.Record",
        entity_type="Payment",
        entity_id=payment.pk,
        details={
            "salesOrderId": order.pk,
            "amount": Money(amount_minor, order.currency_code, order.currency_minor_unit).as_json(),
            "method": method,
        },
    )
    return payment
