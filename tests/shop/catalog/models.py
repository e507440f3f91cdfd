from django.db import models
from tenancy.scoping import TenantScopedManager


class Store(models.Model):
    """The tenant (TENANCY_TENANT_MODEL): members, tokens and products belong to one store."""

    code = models.SlugField(unique=True)  # lowercase; typed at login and in commands
    name = models.CharField(max_length=100)
    is_active = models.BooleanField(default=True)  # False: the store's tokens stop working

    def __str__(self) -> str:
        return self.name


class Product(models.Model):
    store = models.ForeignKey(Store, on_delete=models.CASCADE, related_name="products")
    name = models.CharField(max_length=100)
    price = models.DecimalField(max_digits=10, decimal_places=2)

    # Refuses to query until narrowed to one store: Product.objects.for_tenant(ctx.tenant).
    objects = TenantScopedManager(tenant_field="store")
    # Django's own machinery (admin, cascades, unique checks) uses this plain one.
    all_tenants = models.Manager()

    class Meta:
        default_manager_name = "all_tenants"
        constraints = [
            models.UniqueConstraint(fields=["store", "name"], name="catalog_product_name_unique")
        ]

    def __str__(self) -> str:
        return self.name
