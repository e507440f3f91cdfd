"""An external identity provider's JWTs as credentials: verifying them (``external_jwt``) and
its signing keys, fetched and cached per process (``jwks``)."""
