"""What a project opens to the query tool: models, their fields, who may see them, the tenant.

A ``QueryModel`` is resolved once, lazily (the app registry must be ready): its tenant field
(declared, else the scoped manager's, else the row-level security declaration) and each
declared field path (forward relations only, at most ``max_depth`` joins) with the JSON kind
its values have. A field that is not declared does not exist for the agent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import models

from tenancy import ActorContext, Policy, evaluate, has_perm, rls
from tenancy.scoping import is_tenant_scoped

LOOKUPS: Final = (
    "exact",
    "in",
    "gt",
    "gte",
    "lt",
    "lte",
    "range",
    "isnull",
    "icontains",
    "startswith",
)
TRUNCATIONS: Final = ("day", "week", "month")
AGGREGATES: Final = ("count", "sum", "avg", "min", "max")

_COMPARABLE: Final = frozenset({"exact", "in", "gt", "gte", "lt", "lte", "range", "isnull"})
# Which lookups and aggregates each kind of value admits.
KIND_LOOKUPS: Final[Mapping[str, frozenset[str]]] = {
    "string": _COMPARABLE | {"icontains", "startswith"},
    "integer": _COMPARABLE,
    "number": _COMPARABLE,
    "date": _COMPARABLE,
    "datetime": _COMPARABLE,
    "boolean": frozenset({"exact", "isnull"}),
}
KIND_AGGREGATES: Final[Mapping[str, frozenset[str]]] = {
    "string": frozenset({"count", "min", "max"}),
    "integer": frozenset(AGGREGATES),
    "number": frozenset(AGGREGATES),
    "date": frozenset({"count", "min", "max"}),
    "datetime": frozenset({"count", "min", "max"}),
    "boolean": frozenset({"count"}),
}


def _kind(field: models.Field[Any, Any]) -> str | None:
    if isinstance(field, models.ForeignKey | models.OneToOneField):
        return _kind(field.target_field)
    if isinstance(field, models.BooleanField):
        return "boolean"
    if isinstance(field, models.DateTimeField):  # before DateField: it is one
        return "datetime"
    if isinstance(field, models.DateField):
        return "date"
    if isinstance(field, models.IntegerField | models.AutoField):
        return "integer"
    if isinstance(field, models.DecimalField | models.FloatField):
        return "number"
    if isinstance(field, models.CharField | models.TextField):
        return "string"
    return None


@dataclass(frozen=True)
class QueryField:
    """One declared field path as the agent names it (``author__name``) and its value kind."""

    path: str
    kind: str
    policy: Policy | None
    nullable: bool

    def coerce(self, value: Any) -> Any:
        """``value`` (JSON) as the ORM takes it for this field.

        Raises:
            ValueError: not a value of this field's kind.
        """
        if value is None:
            raise ValueError("null is no value here (use the isnull lookup)")
        if self.kind == "string" and isinstance(value, str):
            return value
        if self.kind == "boolean" and isinstance(value, bool):
            return value
        if self.kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
            return value
        if self.kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
            return value
        if self.kind == "date" and isinstance(value, str) and len(value) == 10:
            return dt.date.fromisoformat(value)
        if self.kind == "datetime" and isinstance(value, str):
            return dt.datetime.fromisoformat(value)
        expected = {"date": "a YYYY-MM-DD string", "datetime": "an ISO 8601 string"}
        raise ValueError(f"expected {expected.get(self.kind, 'a ' + self.kind)}")


class QueryModel:
    """A model the query tool opens: ``fields`` (paths, ``__`` across forward relations) may be
    filtered, ordered, grouped, aggregated and read; nothing else of the model exists for the
    agent.

    ``policy`` decides who sees the model (default: the Django permission
    ``<app_label>.view_<model_name>``); ``restricted`` maps fields to a stricter policy each.
    ``tenant_field`` names the foreign key to the tenant; by default the model's scoped
    manager's (``tenancy.scoping``), else its row-level security declaration's.
    """

    def __init__(
        self,
        model: type[models.Model] | str,
        *,
        fields: Sequence[str],
        name: str | None = None,
        policy: Policy | None = None,
        restricted: Mapping[str, Policy] | None = None,
        tenant_field: str | None = None,
        description: str = "",
    ) -> None:
        if not fields:
            raise ImproperlyConfigured(f"QueryModel {model!r}: declare at least one field")
        self._model = model
        self._declared_fields = tuple(fields)
        self._name = name
        self._policy = policy
        self.restricted = dict(restricted or {})
        unknown = set(self.restricted) - set(fields)
        if unknown:
            raise ImproperlyConfigured(
                f"QueryModel {model!r}: restricted names undeclared fields {sorted(unknown)}"
            )
        self._tenant_field = tenant_field
        self.description = description
        self._resolved: tuple[type[models.Model], dict[str, QueryField], str, str | None] | None
        self._resolved = None

    # --- resolution (once the app registry is ready) ------------------------------------------

    def resolve(self, max_depth: int) -> None:
        """Resolve the model, the tenant field and every field path.

        Raises:
            ImproperlyConfigured: an unknown model or field, a path through a reverse or
                many-to-many relation or deeper than ``max_depth``, a field of no JSON kind,
                or no tenant field to narrow by.
        """
        if self._resolved is not None:
            return
        model: type[models.Model] = (
            apps.get_model(self._model) if isinstance(self._model, str) else self._model
        )
        where = f"QueryModel {model._meta.label}"
        resolved = {
            path: self._resolve_field(where, model, path, max_depth)
            for path in self._declared_fields
        }
        manager = _scoped_manager(model)
        tenant_field = (
            self._tenant_field
            or (manager.get_queryset().tenant_field if manager is not None else None)
            or _rls_field(model)
        )
        if tenant_field is None:
            raise ImproperlyConfigured(
                f"{where}: no tenant field (pass tenant_field=, give the model a scoped "
                "manager, or declare it to tenancy.rls)"
            )
        try:
            model._meta.get_field(tenant_field)
        except FieldDoesNotExist as exc:
            raise ImproperlyConfigured(f"{where}: no tenant field {tenant_field!r}") from exc
        self._resolved = (model, resolved, tenant_field, manager.name if manager else None)

    def _resolve_field(
        self, where: str, model: type[models.Model], path: str, max_depth: int
    ) -> QueryField:
        parts = path.split("__")
        if len(parts) - 1 > max_depth:
            raise ImproperlyConfigured(f"{where}: {path!r} joins more than {max_depth} relations")
        meta = model._meta
        field: Any = None
        for index, part in enumerate(parts):
            try:
                field = meta.get_field(part)
            except FieldDoesNotExist as exc:
                raise ImproperlyConfigured(f"{where}: {path!r}: no field {part!r}") from exc
            forward = getattr(field, "concrete", False) and not field.many_to_many
            if not forward:
                raise ImproperlyConfigured(
                    f"{where}: {path!r}: {part!r} is not a concrete forward field"
                )
            if index < len(parts) - 1:
                if not (field.many_to_one or field.one_to_one):
                    raise ImproperlyConfigured(f"{where}: {path!r}: {part!r} is no relation")
                meta = field.related_model._meta
        kind = _kind(field)
        if kind is None:
            raise ImproperlyConfigured(
                f"{where}: {path!r} has no JSON kind ({type(field).__name__})"
            )
        return QueryField(path, kind, self.restricted.get(path), bool(field.null))

    @property
    def model(self) -> type[models.Model]:
        assert self._resolved is not None, "resolve() first"
        return self._resolved[0]

    @property
    def name(self) -> str:
        if self._name:
            return self._name
        return (
            self._model.lower() if isinstance(self._model, str) else self._model._meta.label_lower
        )

    @property
    def policy(self) -> Policy:
        if self._policy is None:
            meta = self.model._meta
            self._policy = has_perm(f"{meta.app_label}.view_{meta.model_name}")
        return self._policy

    @property
    def tenant_field(self) -> str:
        assert self._resolved is not None, "resolve() first"
        return self._resolved[2]

    @property
    def scoped_manager(self) -> str | None:
        assert self._resolved is not None, "resolve() first"
        return self._resolved[3]

    def fields_for(self, actor: ActorContext) -> dict[str, QueryField]:
        """The fields ``actor`` may use, by path: a restricted field its policy refuses is
        unknown to them, exactly like a field never declared."""
        assert self._resolved is not None, "resolve() first"
        return {
            path: field
            for path, field in self._resolved[1].items()
            if field.policy is None or evaluate(field.policy, actor)
        }


def _scoped_manager(model: type[models.Model]) -> Any:
    for manager in model._meta.managers:
        if is_tenant_scoped(manager):
            return manager
    return None


def _rls_field(model: type[models.Model]) -> str | None:
    for table in rls.declared():
        if table.model is model:
            for field in model._meta.concrete_fields:
                if field.column == table.column:
                    return field.name
    return None
