"""Rate counting: the per-member budgets (``throttling``), the shared counter table
(``counters``), the client's address behind trusted proxies (``addresses``) and one Redis pool
per process (``redis_pool``)."""
