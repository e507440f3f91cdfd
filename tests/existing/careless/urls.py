from django.urls import path

from careless.views import seen
from tracker.urls import urlpatterns as tracker_urlpatterns

urlpatterns = [path("careless/", seen), *tracker_urlpatterns]
