from importlib.util import find_spec

from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    verbose_name = "Tenancy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from tenancy import checks, signals  # noqa: F401
        from tenancy.challenges import register_challenge_parameters
        from tenancy.conf import install_counter_cache_default, install_membership_model_default
        from tenancy.idp import external_jwt
        from tenancy.rls import checks as rls_checks  # noqa: F401
        from tenancy.rls.install import install_after_migrate
        from tenancy.tokens.credentials import register_bearer_verifier

        # Once per migrate, after every app's migrations (sent for each app: this one only).
        post_migrate.connect(install_after_migrate, sender=self)
        install_membership_model_default()
        install_counter_cache_default()
        # No prefix: a JWT is never claimed on the project's routes, only on /mcp and /a2a.
        # Unconfigured (no TENANCY_EXTERNAL_JWT), the verifier answers "not mine" at once.
        register_bearer_verifier(external_jwt.verify)
        register_challenge_parameters(external_jwt.challenge_parameters)
        if find_spec("drf_spectacular") is not None:
            # Registers the OpenAPI security scheme of ck_ tokens (an optional library).
            from tenancy import openapi  # noqa: F401
