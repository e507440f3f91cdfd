"""The farm's admin site: Django's, with sign-in attempts budgeted per client address.

Every wrong password costs a full password hash (PBKDF2, hundreds of milliseconds of CPU), and
``/admin/login/`` takes one from anyone. A POST over ``CLUCK_ADMIN_LOGIN_RATE`` (per client
address, ``tenancy.rates.addresses``; shared by every replica on the rate-limit counters) is
answered 429 with ``Retry-After`` before the form is read. Installed as the default site by
``cluck.apps.CluckAdminConfig`` in place of ``django.contrib.admin`` in ``INSTALLED_APPS``,
so ``admin.site`` and every ``@admin.register`` keep working. To copy into a project: this
module, the two-line ``AdminConfig`` subclass, and the setting.
"""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django_ratelimit.core import get_usage

from tenancy.rates.addresses import rate_key

LOGIN_GROUP: Final = "cluck.admin_login"


class CluckAdminSite(admin.AdminSite):
    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        if request.method == "POST":
            usage = get_usage(
                request,
                group=LOGIN_GROUP,
                key=rate_key,
                rate=settings.CLUCK_ADMIN_LOGIN_RATE,
                increment=True,
            )
            if usage is not None and usage["should_limit"]:
                response = HttpResponse(
                    "Too many sign-in attempts from your address. Retry later.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(max(int(usage["time_left"]), 1))
                return response
        return super().login(request, extra_context)
