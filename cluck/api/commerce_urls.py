"""Commerce routes under ``/api/v1/``. Route names are interfaces (MCP parity keys on them)."""

from __future__ import annotations

from typing import Any

from django.urls import path

from cluck.api import commerce as views
from cluck.api.base import MethodRoutes

customers = MethodRoutes(
    get=("customer-list", views.CustomerListApi),
    post=("customer-create", views.CustomerCreateApi),
)
sales_orders = MethodRoutes(
    get=("sales-order-list", views.SalesOrderListApi),
    post=("sales-order-create", views.SalesOrderCreateApi),
)
order_payments = MethodRoutes(
    get=("order-payment-list", views.OrderPaymentListApi),
    post=("payment-record", views.PaymentRecordApi),
)

urlpatterns: list[Any] = [
    *customers.patterns("customers/"),
    # Before customers/<id>/ so "balances" is never read as a customer id.
    path(
        "customers/balances/",
        views.CustomerBalanceListApi.as_view(),
        name="customer-balance-list",
    ),
    path(
        "customers/<int:customer_id>/",
        views.CustomerDetailApi.as_view(),
        name="customer-detail",
    ),
    *sales_orders.patterns("sales-orders/"),
    path(
        "sales-orders/<int:order_id>/",
        views.SalesOrderDetailApi.as_view(),
        name="sales-order-detail",
    ),
    path(
        "sales-orders/<int:order_id>/confirm/",
        views.SalesOrderConfirmApi.as_view(),
        name="sales-order-confirm",
    ),
    *order_payments.patterns("sales-orders/<int:order_id>/payments/"),
]
