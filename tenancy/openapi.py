"""drf-spectacular's description of ``TenancyAuthentication``: an HTTP bearer scheme.

Imported by ``TenancyConfig.ready()`` only when drf-spectacular is installed (it is no
dependency of the toolkit). Without it a project whose schema lists ``TenancyAuthentication``
gets no security scheme for ``ck_…`` tokens, and ``check --deploy`` warns
``drf_spectacular.W001`` ("could not resolve authenticator").
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class TenancyBearerScheme(OpenApiAuthenticationExtension):
    """Documents ``tenancy.drf_authentication.TenancyAuthentication`` as HTTP bearer auth."""

    target_class = "tenancy.drf_authentication.TenancyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal access token (ck_…) or a login token, per membership.",
        }
