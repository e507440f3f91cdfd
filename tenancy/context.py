"""Request-scoped identity: tenant, actor and row scope.

Each value is *single-assignment*: resolving again with the same value is a no-op (so defensive
callers are not order-dependent), resolving with a different value raises ``ReassignmentError``
and leaves the original intact. Everything downstream reads these lazily, so re-pointing one
mid-request would change the meaning of work already done.
"""

from __future__ import annotations

from typing import Any

from tenancy.exceptions import ReassignmentError
from tenancy.roles import DENIED, Role


class TenantContext:
    """The tenant (account, organisation, store …) a request acts in. Unresolved until the
    middleware says so."""

    __slots__ = ("_instance", "_is_resolved")

    def __init__(self) -> None:
        self._instance: Any = None
        self._is_resolved = False

    @property
    def is_resolved(self) -> bool:
        return self._is_resolved

    @property
    def id(self) -> Any:
        return self._instance.pk if self._instance is not None else None

    @property
    def instance(self) -> Any:
        """The tenant model instance (``TENANCY_TENANT_MODEL``), or ``None`` while unresolved."""
        return self._instance

    def resolve(self, tenant: Any) -> None:
        if tenant is None or getattr(tenant, "pk", None) is None:
            raise ValueError("a tenant must be a saved model instance")
        if self._is_resolved:
            if self._instance.pk == tenant.pk:
                return
            raise ReassignmentError(
                f"tenant already resolved to {self._instance.pk!r}; refusing {tenant.pk!r}"
            )
        self._instance = tenant
        self._is_resolved = True

    def __repr__(self) -> str:
        return f"<TenantContext resolved={self._is_resolved} id={self.id!r}>"


class ActorContext:
    """Who is calling: a person (user + membership + effective role) or the system actor."""

    __slots__ = (
        "_is_resolved",
        "user",
        "user_id",
        "email",
        "roles",
        "role",
        "membership_id",
        "token_id",
        "credential_epoch",
        "scopes",
        "identity",
        "is_system",
        "label",
        "permissions",
    )

    def __init__(self) -> None:
        self._is_resolved = False
        self.user: Any = None
        self.user_id: int | None = None
        self.email = ""
        self.roles: tuple[str, ...] = ()
        self.role: Role = DENIED
        self.membership_id: int | None = None
        self.token_id: int | None = None
        # The membership's credential epoch the credential was checked at: work that goes on
        # after the request (a task, a stream) is judged again against it
        # (``tenancy.tokens.ensure_still_live``).
        self.credential_epoch: int | None = None
        # What the credential may do on top of the role (OAuth scopes); None = not narrowed
        # (personal and session tokens).
        self.scopes: frozenset[str] | None = None
        # ``(issuer, subject)`` of an external identity provider's token; None for the
        # toolkit's own credentials.
        self.identity: tuple[str, str] | None = None
        self.is_system = False
        self.label = ""
        # The user's Django permissions, once a has_perm policy asked (tenancy.roles).
        self.permissions: frozenset[str] | None = None

    @property
    def is_resolved(self) -> bool:
        return self._is_resolved

    def _identity(self) -> tuple[Any, ...]:
        return (self.user_id, self.membership_id, self.roles, self.is_system, self.label)

    def resolve(
        self,
        *,
        user: Any,
        membership_id: int,
        roles: tuple[str, ...],
        role: Role,
        token_id: int | None = None,
        scopes: frozenset[str] | None = None,
        credential_epoch: int | None = None,
        identity: tuple[str, str] | None = None,
    ) -> None:
        """Resolve to a real person. ``user`` must be a saved user instance.

        ``scopes`` narrows what the credential may do below the role (an OAuth access token's
        scopes); ``None`` means the role alone decides (personal and session tokens).
        """
        if user is None or user.pk is None:
            raise ValueError("a person actor needs a saved user")
        candidate = (user.pk, membership_id, tuple(roles), False, "")
        if self._is_resolved:
            if self._identity() == candidate:
                return
            raise ReassignmentError("actor already resolved to a different principal")
        self.user = user
        self.user_id = user.pk
        self.email = user.email
        self.roles = tuple(roles)
        self.role = role
        self.membership_id = membership_id
        self.token_id = token_id
        self.credential_epoch = credential_epoch
        self.scopes = frozenset(scopes) if scopes is not None else None
        self.identity = identity
        self.is_system = False
        self._is_resolved = True

    def resolve_system(self, label: str) -> None:
        """Resolve as the system actor (management commands). It has no user and no roles.

        Hazard: it has tenant-wide row reach (commands act for the whole tenant); this is why
        its role is ``DENIED`` and network channels refuse a system actor.
        """
        if not label:
            raise ValueError("a system actor needs a label such as 'cli:seed_demo'")
        candidate = (None, None, (), True, label)
        if self._is_resolved:
            if self._identity() == candidate:
                return
            raise ReassignmentError("actor already resolved to a different principal")
        self.user_id = None
        self.email = label
        self.roles = ()
        self.role = DENIED
        self.is_system = True
        self.label = label
        self._is_resolved = True

    def __repr__(self) -> str:
        return (
            f"<ActorContext resolved={self._is_resolved} user_id={self.user_id!r} "
            f"role={self.role.label} system={self.is_system}>"
        )


class RowScope:
    """Which rows, below the tenant, the actor may touch (e.g. the projects, stores or sites a
    restricted member is assigned to). The project decides what a row is, through
    ``TENANCY_ROW_SCOPE_RESOLVER``; without one every actor is unrestricted.

    ``is_unrestricted`` defaults to True *while unresolved* so seeders, commands and hand-built
    contexts keep tenant-wide reads. That default is exactly why anything security-relevant must
    check ``is_resolved`` and never ``is_unrestricted``.
    """

    __slots__ = ("_is_resolved", "_is_unrestricted", "_row_ids")

    def __init__(self) -> None:
        self._is_resolved = False
        self._is_unrestricted = True
        self._row_ids: frozenset[Any] = frozenset()

    @property
    def is_resolved(self) -> bool:
        return self._is_resolved

    @property
    def is_unrestricted(self) -> bool:
        return self._is_unrestricted

    @property
    def row_ids(self) -> frozenset[Any]:
        """The ids of the rows a restricted actor may touch (empty when unrestricted)."""
        return self._row_ids

    def resolve(self, *, unrestricted: bool, row_ids: frozenset[Any] = frozenset()) -> None:
        ids = frozenset() if unrestricted else frozenset(row_ids)
        if self._is_resolved:
            if (self._is_unrestricted, self._row_ids) == (unrestricted, ids):
                return
            raise ReassignmentError("row scope already resolved to a different value")
        self._is_unrestricted = unrestricted
        self._row_ids = ids
        self._is_resolved = True

    def allows(self, row_id: Any) -> bool:
        return self._is_unrestricted or row_id in self._row_ids

    def __repr__(self) -> str:
        return (
            f"<RowScope resolved={self._is_resolved} unrestricted={self._is_unrestricted} "
            f"rows={sorted(self._row_ids)!r}>"
        )
