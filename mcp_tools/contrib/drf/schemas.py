"""The schemas of a DRF view as a tool: its input (serializer fields, filter and pagination
parameters, the route's lookup) and output (readable fields, the paginated envelope).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Literal

from pydantic import ConfigDict, Field, create_model


def _first_paragraph(view_class: type[Any], action: str) -> str:
    doc = getattr(getattr(view_class, action, None), "__doc__", None) or view_class.__doc__ or ""
    return doc.strip().split("\n\n")[0].strip()


def _is_hidden(field: Any) -> bool:
    from rest_framework import serializers

    return isinstance(field, serializers.HiddenField)


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    """An optional field that refuses null (DRF: ``allow_null=False``) is simply left out; its
    placeholder default is not a value the client may send."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None and "anyOf" not in prop:
            del prop["default"]


def _parameter_field(parameter: Mapping[str, Any]) -> tuple[Any, Any]:
    schema = parameter.get("schema") or {}
    kind = schema.get("type")
    annotation: Any
    info: dict[str, Any] = {}
    if schema.get("enum"):
        annotation = Literal[tuple(schema["enum"])]
    elif kind == "integer":
        annotation = int
        info["ge"] = schema.get("minimum", 1)
        if "maximum" in schema:
            info["le"] = schema["maximum"]
    elif kind == "number":
        annotation = float
    elif kind == "boolean":
        annotation = bool
    elif kind == "array":
        annotation = list[str]
    else:
        annotation = str
    description = parameter.get("description")
    if description:
        info["description"] = str(description)
    required = bool(parameter.get("required"))
    return annotation, Field(default=... if required else None, **info)


def _input_type(field: Any) -> tuple[Any, dict[str, Any]]:
    """A pydantic annotation and ``Field`` options accepting what ``field`` accepts."""
    from rest_framework import relations, serializers

    inner: Any

    info: dict[str, Any] = {}
    if field.help_text:
        info["description"] = str(field.help_text)
    annotation: Any
    if isinstance(field, serializers.BaseSerializer):
        many = isinstance(field, serializers.ListSerializer)
        inner = field.child if many else field  # type: ignore[attr-defined]
        fields = {}
        for name, child in inner.fields.items():
            if child.read_only or _is_hidden(child):
                continue
            child_type, child_info = _input_type(child)
            fields[name] = (
                child_type,
                Field(default=... if child.required else None, **child_info),
            )
        nested: Any = create_model(  # type: ignore[call-overload]
            type(inner).__name__,
            __config__=ConfigDict(extra="forbid", strict=True),
            **fields,
        )
        annotation = list[nested] if many else nested
    elif isinstance(field, serializers.BooleanField):
        annotation = bool
    elif isinstance(field, serializers.MultipleChoiceField):
        annotation = list[Literal[tuple(field.choices)]]  # type: ignore[misc]
    elif isinstance(field, serializers.ChoiceField):
        annotation = Literal[tuple(field.choices)]
    elif isinstance(field, serializers.IntegerField):
        annotation = int
        _bounds(field, info)
    elif isinstance(field, serializers.FloatField):
        annotation = float
        _bounds(field, info)
    elif isinstance(field, serializers.DecimalField):
        annotation = Decimal
        _bounds(field, info)
        if field.max_digits is not None:
            info["max_digits"] = field.max_digits
        if field.decimal_places is not None:
            info["decimal_places"] = field.decimal_places
    elif isinstance(field, serializers.DateTimeField):
        annotation = datetime
    elif isinstance(field, serializers.DateField):
        annotation = date
    elif isinstance(field, serializers.TimeField):
        annotation = time
    elif isinstance(field, serializers.CharField):
        annotation = str
        if field.max_length is not None:
            info["max_length"] = field.max_length
        if field.min_length is not None:
            info["min_length"] = field.min_length
        if not field.allow_blank:
            info.setdefault("min_length", 1)
            if field.trim_whitespace:
                # DRF strips first: a blank after stripping is refused as blank.
                info["pattern"] = r"\S"
        if isinstance(field, serializers.EmailField):
            info["json_schema_extra"] = {"format": "email"}
    elif isinstance(field, serializers.UUIDField):
        annotation = str
        info["json_schema_extra"] = {"format": "uuid"}
    elif isinstance(field, relations.ManyRelatedField):
        child, _ = _input_type(field.child_relation)
        annotation = list[child]  # type: ignore[valid-type]
    elif isinstance(field, relations.PrimaryKeyRelatedField):
        annotation = int
    elif isinstance(field, relations.RelatedField):
        annotation = str
    elif isinstance(field, serializers.ListField):
        child, _ = _input_type(field.child)
        annotation = list[child]  # type: ignore[valid-type]
        if field.min_length is not None:
            info["min_length"] = field.min_length
        if field.max_length is not None:
            info["max_length"] = field.max_length
    elif isinstance(field, serializers.DictField):
        annotation = dict[str, Any]
    else:
        annotation = Any
    if getattr(field, "allow_null", False):
        annotation = annotation | None
    return annotation, info


def _bounds(field: Any, info: dict[str, Any]) -> None:
    if field.min_value is not None:
        info["ge"] = field.min_value
    if field.max_value is not None:
        info["le"] = field.max_value


def _output_object(serializer: Any) -> dict[str, Any]:
    properties = {
        name: _output_field(field)
        for name, field in serializer.fields.items()
        if not field.write_only
    }
    return {"type": "object", "properties": properties}


def _output_field(field: Any) -> dict[str, Any]:
    """The JSON Schema of what ``field`` renders (lenient where the value is the view's)."""
    from rest_framework import relations, serializers
    from rest_framework.settings import api_settings

    schema: dict[str, Any]
    if isinstance(field, serializers.ListSerializer):
        schema = {"type": "array", "items": _output_object(field.child)}
    elif isinstance(field, serializers.BaseSerializer):
        schema = _output_object(field)
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, serializers.FloatField):
        schema = {"type": "number"}
    elif isinstance(field, serializers.DecimalField):
        as_string = getattr(field, "coerce_to_string", None)
        if as_string is None:
            as_string = api_settings.COERCE_DECIMAL_TO_STRING
        schema = {"type": "string"} if as_string else {"type": "number"}
    elif isinstance(
        field,
        serializers.CharField
        | serializers.DateField
        | serializers.DateTimeField
        | serializers.TimeField
        | serializers.UUIDField,
    ):
        schema = {"type": "string"}
    elif isinstance(field, relations.ManyRelatedField):
        schema = {"type": "array", "items": _output_field(field.child_relation)}
    elif isinstance(field, relations.PrimaryKeyRelatedField):
        schema = {"type": ["integer", "string"]}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array"}
    else:
        return {}  # SerializerMethodField, JSONField, ChoiceField…: the view's own values
    if getattr(field, "allow_null", False):
        kind = schema["type"]
        schema["type"] = [*(kind if isinstance(kind, list) else [kind]), "null"]
    return schema


def _json_schema(openapi: Any) -> Any:
    """An OpenAPI 3.0 schema fragment (a paginator's envelope) as JSON Schema 2020-12."""
    if isinstance(openapi, list):
        return [_json_schema(item) for item in openapi]
    if not isinstance(openapi, dict):
        return openapi
    converted = {
        key: _json_schema(value)
        for key, value in openapi.items()
        if key not in ("example", "nullable", "format")
    }
    if openapi.get("nullable") and "type" in converted:
        kind = converted["type"]
        converted["type"] = [*(kind if isinstance(kind, list) else [kind]), "null"]
    return converted
