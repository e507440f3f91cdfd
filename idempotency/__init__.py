"""``idempotency``: one claim → execute → publish port (placeholder; being built)."""
