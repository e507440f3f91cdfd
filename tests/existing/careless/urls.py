from django.urls import include, path

from careless.views import seen
from tracker.urls import urlpatterns as tracker_urlpatterns

urlpatterns = [
    path("careless/", seen),
    path("", include("a2a_tools.urls")),  # POST /a2a
    *tracker_urlpatterns,
]
