"""Roles, the effective-role rule and policies — declared by the project, decided here.

A project declares its roles once, in order of reach, as a ``RoleSet`` named by the
``TENANCY_ROLES`` setting (a dotted path); without it the neutral ``DEFAULT_ROLES`` apply
(``ReadOnly`` < ``Member`` < ``Admin``; a membership with no stored role is a ``Member``).
Routes and MCP tools pick a *policy* — a named set of admitted role names — never a raw role,
and both are decided by ``evaluate``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from tenancy.context import ActorContext


@dataclass(frozen=True)
class Role:
    """One declared role. ``rank`` orders reach; ``stored_as`` is its membership string."""

    name: str
    rank: int
    stored_as: str = field(compare=False)

    @property
    def label(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<Role {self.name}>"


# Only stored role strings that no declaration knows: a membership that admits nothing.
DENIED: Final = Role("Denied", -1, "")


class RoleSet:
    """A project's roles, lowest reach first.

    Each entry is a name, or ``(name, stored_as)`` when the string kept on memberships differs
    (e.g. a role renamed after tokens were issued). ``default`` is the role of a membership that
    stores no role at all; ``None`` means such a membership is ``DENIED``.
    """

    def __init__(self, roles: Sequence[str | tuple[str, str]], *, default: str | None) -> None:
        declared: list[Role] = []
        for rank, entry in enumerate(roles):
            name, stored = (entry, entry) if isinstance(entry, str) else entry
            if not name or not isinstance(name, str) or name == DENIED.name:
                raise ImproperlyConfigured(f"invalid role name {name!r}")
            declared.append(Role(name, rank, stored))
        self._by_name = {role.name: role for role in declared}
        if len(self._by_name) != len(declared):
            raise ImproperlyConfigured("role names must be unique")
        if default is not None and default not in self._by_name:
            raise ImproperlyConfigured(f"default role {default!r} is not declared")
        self._by_stored = {role.stored_as: role for role in declared}
        self.roles: tuple[Role, ...] = tuple(declared)
        self.default: Role | None = self._by_name[default] if default is not None else None

    def __iter__(self) -> Iterator[Role]:
        return iter(self.roles)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> Role:
        return self._by_name[name]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def stored_names(self) -> frozenset[str]:
        """The strings a membership may store."""
        return frozenset(self._by_stored)

    def by_stored(self, stored: str) -> Role | None:
        return self._by_stored.get(stored)

    def effective(self, stored: Iterable[str]) -> Role:
        """No stored role → the default; otherwise the highest recognised; only unknown → DENIED.

        Multi-role principals take the highest role so "Admin + ReadOnly" is never locked out.
        """
        names = list(stored)
        if not names:
            return self.default or DENIED
        known = [self._by_stored[name] for name in names if name in self._by_stored]
        if not known:
            return DENIED
        return max(known, key=lambda role: role.rank)

    def stored_for(self, name: str) -> list[str]:
        """What a membership stores to hold role ``name`` (``[]`` for the default role)."""
        role = self._by_name[name]
        return [] if role is self.default else [role.stored_as]


DEFAULT_ROLES: Final = RoleSet(["ReadOnly", "Member", "Admin"], default="Member")


@functools.lru_cache(maxsize=4)
def _load(path: str | None) -> RoleSet:
    if path is None:
        return DEFAULT_ROLES
    from django.utils.module_loading import import_string

    try:
        declared = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"TENANCY_ROLES {path!r} cannot be imported: {exc}") from exc
    if not isinstance(declared, RoleSet):
        raise ImproperlyConfigured(f"TENANCY_ROLES {path!r} is not a tenancy.RoleSet")
    return declared


def active_roles() -> RoleSet:
    """The project's ``RoleSet`` (``TENANCY_ROLES``), or ``DEFAULT_ROLES``.

    Raises:
        ImproperlyConfigured: the setting names nothing importable or not a ``RoleSet``.
    """
    from tenancy import conf

    return _load(conf.get("ROLES"))


def group_roles(user: Any) -> list[Role]:
    """The declared roles named by ``user``'s Django groups (by name or stored string)."""
    groups = getattr(user, "groups", None)
    if groups is None:
        return []
    declared = active_roles()
    found = []
    for name in groups.values_list("name", flat=True):
        role = declared.by_stored(name) or (declared[name] if name in declared else None)
        if role is not None:
            found.append(role)
    return found


def effective_role(stored: Iterable[str]) -> Role:
    """The effective role of a membership storing ``stored``, under the active role set."""
    return active_roles().effective(stored)


class _Everyone:
    """Admits every declared role (never ``DENIED``)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in active_roles()

    def __repr__(self) -> str:
        return "every role"


EVERY_ROLE: Final = _Everyone()
_declared_policies: list[Policy] = []


class Policy:
    """A named set of admitted role names (``EVERY_ROLE`` for all declared roles), and
    optionally Django permissions the member's user must hold too (``has_perm``).

    Role names are checked against the active ``RoleSet`` by system check ``tenancy.E004``,
    so a policy naming a role the project does not declare fails ``manage.py check``.
    """

    __slots__ = ("name", "admits", "perms")

    def __init__(
        self, name: str, admits: Iterable[str] | _Everyone, *, perms: Iterable[str] = ()
    ) -> None:
        self.name = name
        self.admits: frozenset[str] | _Everyone = (
            admits if isinstance(admits, _Everyone) else frozenset(admits)
        )
        self.perms: frozenset[str] = frozenset(perms)
        _declared_policies.append(self)

    def __repr__(self) -> str:
        perms = f" with {sorted(self.perms)}" if self.perms else ""
        return f"<Policy {self.name}: {self.admits!r}{perms}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and (self.name, self.admits, self.perms) == (
            other.name,
            other.admits,
            other.perms,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.admits, self.perms))

    @property
    def per_user(self) -> bool:
        """The decision depends on the user, not only on the role (Django permissions)."""
        return bool(self.perms)

    def allows_role(self, role: Role) -> bool:
        return role is not DENIED and role.name in self.admits

    def allows_actor(self, actor: ActorContext) -> bool:
        """The user half: every permission of ``perms`` is the actor's (always True without)."""
        if not self.perms:
            return True
        return self.perms <= load_permissions(actor)

    def allows_object(self, actor: ActorContext, obj: object) -> bool:
        """``perms`` on ``obj`` through the authentication backends (object permissions, e.g.
        django-guardian); the role half is not asked (``evaluate`` first)."""
        has_perms = getattr(actor.user, "has_perms", None)
        return callable(has_perms) and bool(has_perms(sorted(self.perms), obj))

    def admitted(self) -> tuple[Role, ...]:
        """The declared roles this policy admits, lowest reach first (by role alone)."""
        return tuple(role for role in active_roles() if self.allows_role(role))


def has_perm(
    *perms: str, name: str | None = None, roles: Iterable[str] | _Everyone | None = None
) -> Policy:
    """A policy admitting members whose user holds every Django permission of ``perms``
    (``"app_label.codename"``, as ``user.has_perms`` reads them: model, group and every
    authentication backend's global permissions; a superuser holds them all), in ``roles``
    (every declared role by default).

    Discovery filters ``tools/list`` by it and every call asks it again (``evaluate``).

    Raises:
        ImproperlyConfigured: no permission, or one not spelled ``app_label.codename``.
    """
    if not perms or not all(
        isinstance(p, str) and p.count(".") == 1 and all(p.split(".")) for p in perms
    ):
        raise ImproperlyConfigured(
            f"has_perm needs permissions spelled 'app_label.codename', got {perms!r}"
        )
    label = name or "HasPerm(" + ",".join(sorted(perms)) + ")"
    return Policy(label, EVERY_ROLE if roles is None else roles, perms=perms)


def load_permissions(actor: ActorContext) -> frozenset[str]:
    """The actor's Django permissions, read once per request (the actor is per request).

    Synchronous (it may query the database): an async caller loads them first
    (``sync_to_async(load_permissions)(actor)``); ``mcp_tools`` does so per request when a
    policy needs them.
    """
    if actor.permissions is None:
        getter = getattr(actor.user, "get_all_permissions", None)
        actor.permissions = frozenset(getter()) if callable(getter) else frozenset()
    return actor.permissions


AUTHENTICATED: Final = Policy("Authenticated", EVERY_ROLE)


def declared_policies() -> tuple[Policy, ...]:
    return tuple(_declared_policies)


def evaluate(policy: Policy, actor: ActorContext) -> bool:
    """The one authorization decision shared by the REST routes and the MCP tools.

    A system actor is never admitted over a network channel; an unresolved actor never is.
    A ``has_perm`` policy also asks the actor's Django permissions (``load_permissions``).
    """
    return evaluate_role(policy, actor) and policy.allows_actor(actor)


def evaluate_role(policy: Policy, actor: ActorContext) -> bool:
    """The role half of ``evaluate``: what a prepared per-role surface can decide alone."""
    if not actor.is_resolved or actor.is_system:
        return False
    return policy.allows_role(actor.role)
