"""``/api/schema/`` served from memory.

The document, generated once per process and rendered once per format.

Generating the document walks every route and serializer (about 35 ms of CPU here, and
12 ms more to render YAML) and answered anyone who asked, signed in or not. It depends only
on the code, so each process keeps what it rendered until it exits, one entry per renderer
(four). ``?lang=`` and ``?version=`` are ignored (the API's text is English only, and it has no
versioning; drf-spectacular's own view honours both, and Django knows about a hundred
languages): no query string makes a new entry or puts its own text into the document others
are served.

(A module of its own: ``drf_spectacular.views`` imports ``cluck.api.schema``'s generator when
it loads.)
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView


class CachedSchemaView(SpectacularAPIView):
    # The schema describes this endpoint with drf-spectacular's own words.
    __doc__ = SpectacularAPIView.__doc__  # type: ignore[assignment]

    _rendered: ClassVar[dict[type, tuple[bytes, str, str]]] = {}

    @extend_schema(**SCHEMA_KWARGS)
    def get(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponse:
        renderer = request.accepted_renderer
        cached = self._rendered.get(type(renderer))
        if cached is None:
            generator = self.generator_class(
                urlconf=self.urlconf, api_version=self.api_version, patterns=self.patterns
            )
            data = generator.get_schema(request=request, public=self.serve_public)
            content_type = renderer.media_type + (
                f"; charset={renderer.charset}" if renderer.charset else ""
            )
            cached = (
                renderer.render(data, renderer.media_type, self.get_renderer_context()),
                content_type,
                self._get_filename(request, self.api_version),
            )
            self._rendered[type(renderer)] = cached
        body, content_type, filename = cached
        return HttpResponse(
            body,
            content_type=content_type,
            headers={"Content-Disposition": f'inline; filename="{filename}"'},
        )


@receiver(setting_changed)
def _forget_rendered_schemas(*, setting: str, **kwargs: Any) -> None:
    if setting in {"SPECTACULAR_SETTINGS", "ROOT_URLCONF", "LANGUAGES", "REST_FRAMEWORK"}:
        CachedSchemaView._rendered.clear()
