from django.apps import AppConfig


class McpBenchConfig(AppConfig):
    name = "bench.mcp_bench_app"
    label = "mcp_bench_app"
