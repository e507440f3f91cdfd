"""The flat layout's import paths (``mcp_tools.test``, ``mcp_tools.registry`` …) keep working
for one release, with a ``DeprecationWarning``; the admin still lists the app's models now
that its module is ``mcp_tools.operator.admin``."""

from __future__ import annotations

import importlib
import sys

import pytest
from django.contrib import admin

from mcp_tools.models import CallAudit, TenantSwitches
from mcp_tools.testing.client import MCPClient
from tests.mutations import mutation


@pytest.fixture
def forget_old_paths():
    """Each test imports the old paths afresh (a module imported once is not warned again)."""
    old = {name for name in sys.modules if name in ("mcp_tools.test", "mcp_tools.drf")}
    for name in old:
        del sys.modules[name]
    yield
    for name in ("mcp_tools.test", "mcp_tools.drf"):
        sys.modules.pop(name, None)


@mutation(
    "mcp_tools/__init__.py",
    find="            DeprecationWarning,\n",
    replace="            UserWarning,\n",
)
def test_an_old_path_imports_with_a_deprecation_warning_and_the_same_objects(forget_old_paths):
    """Guard: ``import mcp_tools.test`` warns (``DeprecationWarning``, naming the new path) and
    gives the very objects of ``mcp_tools.testing.client``. Mutation: warn a ``UserWarning``
    instead → ``pytest.deprecated_call`` sees no deprecation → red."""
    with pytest.deprecated_call(match="mcp_tools.testing.client"):
        old = importlib.import_module("mcp_tools.test")
    assert old.MCPClient is MCPClient
    with pytest.deprecated_call(match="mcp_tools.contrib.drf"):
        drf = importlib.import_module("mcp_tools.drf")
    assert drf.drf_tool is importlib.import_module("mcp_tools.contrib.drf").drf_tool


def test_a_name_that_never_was_a_module_is_still_not_one():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mcp_tools.no_such_module")


@mutation(
    "mcp_tools/apps.py",
    find="        from mcp_tools.operator import admin",
    replace="        admin = None",
)
def test_the_admin_lists_the_apps_models():
    """Guard: Django's admin autodiscovery looks for ``mcp_tools.admin``, which is no module
    any more; ``apps.ready()`` imports ``mcp_tools.operator.admin``. Mutation: not imported →
    nothing registers ``CallAudit`` → red."""
    assert admin.site.is_registered(CallAudit)
    assert admin.site.is_registered(TenantSwitches)
