from django.apps import AppConfig


class SurfaceBenchConfig(AppConfig):
    name = "bench.surface_bench_app"
    label = "surface_bench_app"
