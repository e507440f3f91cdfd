"""Django's PostgreSQL backend whose connection pool probes a connection before lending it."""
