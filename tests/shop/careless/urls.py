from django.urls import include, path
from rest_framework.routers import SimpleRouter

from careless.api import CarelessProducts

router = SimpleRouter()
router.register("products", CarelessProducts, basename="careless-product")

urlpatterns = [
    path("", include("shop.urls")),
    path("", include("a2a_tools.urls")),  # POST /a2a
    path("careless/", include(router.urls)),
]
