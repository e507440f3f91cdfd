"""The operator's kit: per-tenant switches, scope quotas, the REST API and its URLs, and the
admin."""
