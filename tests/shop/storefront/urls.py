from django.urls import include, path
from rest_framework.routers import SimpleRouter

from storefront.api import ProductViewSet
from storefront.ninja_api import api as ninja_api

router = SimpleRouter()
router.register("products", ProductViewSet, basename="product")

urlpatterns = [
    path("", include("shop.urls")),
    path("api/v1/shop/", include(router.urls)),
    path("api/v1/shop/ninja/", ninja_api.urls),
]
