"""Print, as JSON, every public name and stable code of tenancy, idempotency and mcp_tools.

Run by ``tests/shop/test_neutral_names.py`` in a subprocess, inside a copy of the shop project
(``DJANGO_SETTINGS_MODULE=shop.settings``: every toolkit setting at its default), so the names
are the ones an outside project sees — the REST field names of ``tenancy.api`` and the command
options follow ``TENANCY_TENANT_NOUN``/``TENANCY_ROW_NOUN``, which only the farm changes.
Output: ``[[where, name], ...]``.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import json
import os
import pkgutil
import sys
from pathlib import Path
from typing import Any

APPS = ("tenancy", "idempotency", "mcp_tools")
OPTIONAL_APPS = ("tenancy.oauth",)
# Keyword arguments whose literal values are stable identifiers (error codes, check ids, route
# names, logger and context-variable names).
CODE_KEYWORDS = {"code", "default_code", "id", "name", "group", "thread_name_prefix"}


def _ours(obj: Any) -> bool:
    return str(getattr(obj, "__module__", "") or "").split(".")[0] in APPS


def _made_here(obj: Any, module: Any) -> bool:
    """Defined in ``module`` — or built there with ``type(...)`` (its ``__module__`` then names
    the metaclass's module, e.g. DRF's, where no such name exists)."""
    if obj.__module__ == module.__name__:
        return True
    home = sys.modules.get(obj.__module__)
    return getattr(home, obj.__name__, None) is not obj


def _modules() -> list[Any]:
    from django.apps import apps

    found = []
    for app in APPS:
        package = importlib.import_module(app)
        found.append(package)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{app}."):
            # An optional sub-app (tenancy.oauth) is scanned only where a project installs it:
            # its models cannot even be imported otherwise.
            optional = next((name for name in OPTIONAL_APPS if info.name.startswith(name)), None)
            if optional is not None and not apps.is_installed(optional):
                continue
            found.append(importlib.import_module(info.name))
    return found


def _class_names(cls: type, where: str) -> list[tuple[str, str]]:
    names = [(where, cls.__name__)]
    for attr in vars(cls):
        if not attr.startswith("_"):
            names.append((f"{where}.{cls.__name__}", attr))
    for attr in getattr(cls, "__slots__", ()):
        names.append((f"{where}.{cls.__name__} slot", attr.lstrip("_")))
    if dataclasses.is_dataclass(cls):
        names += [(f"{where}.{cls.__name__} field", f.name) for f in dataclasses.fields(cls)]
    for attr in ("default_code", "code"):
        value = vars(cls).get(attr)
        if isinstance(value, str):
            names.append((f"{where}.{cls.__name__}.{attr} (code)", value))
    declared = vars(cls).get("_declared_fields")
    if declared is not None:  # a DRF serializer: its REST field names
        try:
            fields = cls().get_fields()
        except Exception:  # a serializer that needs context still has its declared fields
            fields = declared
        names += [(f"{where}.{cls.__name__} REST field", field) for field in fields]
    return names


def _module_names(module: Any) -> list[tuple[str, str]]:
    where = module.__name__
    names = [(where, where.rsplit(".", 1)[-1])]
    public = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in public:
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            continue
        if inspect.isfunction(obj) and not _ours(obj):
            continue  # imported from Django, DRF, pydantic …
        if inspect.isclass(obj) and not (_ours(obj) or _made_here(obj, module)):
            continue
        names.append((where, name))
        if inspect.isclass(obj) and _made_here(obj, module):
            names += _class_names(obj, where)
    return names


def _source_codes(module: Any) -> list[tuple[str, str]]:
    """String literals that are identifiers: ``code=``/``id=``/… keyword values, class-level
    ``default_code``/``code`` assignments, and anything shaped like ``Area.Code``."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return []
    names = []
    tree = ast.parse(Path(path).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in CODE_KEYWORDS:
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                names.append((f"{module.__name__} {node.arg}=", node.value.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr not in ("getLogger", "ContextVar"):
                continue
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.append((f"{module.__name__} {node.func.attr}", arg.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            head, dot, tail = text.partition(".")
            if dot and head[:1].isupper() and tail[:1].isupper() and (head + tail).isalnum():
                names.append((f"{module.__name__} code literal", text))
    return names


def collect() -> list[tuple[str, str]]:
    import django
    from django.apps import apps
    from django.core.management import get_commands, load_command_class
    from django.urls import get_resolver

    django.setup()
    names: list[tuple[str, str]] = []
    for module in _modules():
        names += _module_names(module)
        names += _source_codes(module)
    for app in APPS:
        conf = importlib.import_module(f"{app}.conf")
        prefix = app.upper()
        names += [(f"{app}.conf.DEFAULTS", f"{prefix}_{key}") for key in conf.DEFAULTS]
        for model in apps.get_app_config(app).get_models():
            names.append((f"{app} model", model.__name__))
            names.append((f"{app} table", model._meta.db_table))
            names += [(f"{app}.{model.__name__} field", f.name) for f in model._meta.fields]
    for command, app in get_commands().items():
        if app not in APPS:
            continue
        names.append(("management command", command))
        parser = load_command_class(app, command).create_parser("manage.py", command)
        for action in parser._actions:
            names += [(f"{command} option", option) for option in action.option_strings]
            names.append((f"{command} option dest", action.dest))
    for pattern in get_resolver().url_patterns:
        for entry in getattr(pattern, "url_patterns", [pattern]):
            if str(getattr(entry, "lookup_str", "")).split(".")[0] in APPS and entry.name:
                names.append(("route name", entry.name))
                names.append(("route", str(pattern.pattern) + str(entry.pattern)))
    from tenancy import AUTHENTICATED, DEFAULT_ROLES, DENIED

    names += [("tenancy.DEFAULT_ROLES", name) for name in DEFAULT_ROLES.names]
    names += [("tenancy policy", AUTHENTICATED.name), ("tenancy role", DENIED.name)]
    return names


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())  # the shop project, as manage.py would have it
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")
    json.dump(sorted(set(collect())), sys.stdout)
