import importlib.util

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured

# Before Django imports this app's models, which import django-oauth-toolkit: without the
# extra, start-up stops here naming it, not on a bare ModuleNotFoundError from models.py.
if importlib.util.find_spec("oauth2_provider") is None:
    raise ImproperlyConfigured(
        "tenancy.oauth needs django-oauth-toolkit: pip install 'cluck[oauth]'"
    )


class TenancyOAuthConfig(AppConfig):
    name = "tenancy.oauth"
    label = "tenancy_oauth"
    verbose_name = "Tenancy: OAuth sign-in"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tenancy.challenges import register_challenge_parameters
        from tenancy.oauth import bearer, checks, tokens  # noqa: F401
        from tenancy.tokens.credentials import register_bearer_verifier

        register_bearer_verifier(bearer.verify, prefixes=[tokens.ACCESS_PREFIX])
        register_challenge_parameters(bearer.challenge_parameters)
