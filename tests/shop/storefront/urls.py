from django.urls import include, path
from rest_framework.routers import SimpleRouter

from storefront.api import ProductViewSet

router = SimpleRouter()
router.register("products", ProductViewSet, basename="product")

urlpatterns = [
    path("", include("shop.urls")),
    path("api/v1/shop/", include(router.urls)),
]
