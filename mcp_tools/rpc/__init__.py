"""The RPC layer: one request object (``request``), the router that owns the order of steps
(``router``) and the one place an outcome becomes a reply (``replies``)."""
