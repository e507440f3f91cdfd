"""The tool, declared the way django-mcp-server's README does (found by ``autodiscover_modules``).

Its methods run with ``self.request`` set to the request, so the tenant is at hand as in Cluck.
"""

from __future__ import annotations

from mcp_server import MCPToolset
from pydantic import BaseModel


class Sum(BaseModel):
    sum: int
    tenant: int


class BenchTools(MCPToolset):
    def bench_add(self, a: int, b: int) -> Sum:
        """a + b"""
        return Sum(sum=a + b, tenant=self.request.tenant.id)
