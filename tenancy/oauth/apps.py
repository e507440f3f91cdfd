from django.apps import AppConfig


class TenancyOAuthConfig(AppConfig):
    name = "tenancy.oauth"
    label = "tenancy_oauth"
    verbose_name = "Tenancy: OAuth sign-in"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tenancy.challenges import register_challenge_parameters
        from tenancy.credentials import register_bearer_verifier
        from tenancy.oauth import bearer, checks, tokens  # noqa: F401

        register_bearer_verifier(bearer.verify, prefixes=[tokens.ACCESS_PREFIX])
        register_challenge_parameters(bearer.challenge_parameters)
