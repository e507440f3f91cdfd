"""One call's own world: the ``CallContext`` a tool receives, its exchange with the client,
cancellation and the caller judged again later."""
