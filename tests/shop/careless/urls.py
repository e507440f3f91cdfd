from django.urls import include, path
from rest_framework.routers import SimpleRouter

from careless.api import CarelessProducts

router = SimpleRouter()
router.register("products", CarelessProducts, basename="careless-product")

urlpatterns = [path("", include("shop.urls")), path("careless/", include(router.urls))]
