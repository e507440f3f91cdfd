from django.conf import settings
from rest_framework.routers import DefaultRouter, SimpleRouter

from harbor.berths.api import BerthViewSet

router = DefaultRouter() if settings.DEBUG else SimpleRouter()

router.register("berths", BerthViewSet)


app_name = "api"
urlpatterns = router.urls
