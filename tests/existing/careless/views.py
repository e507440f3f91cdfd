from django.http import HttpRequest, JsonResponse

from careless.queries import careless_read


def seen(request: HttpRequest) -> JsonResponse:
    """The project's own view running the careless queries (no tool call: no role)."""
    return JsonResponse(careless_read())
