"""The peer projects' tenant: what tenancy reads of cluck.Farm (code, active flag), no more."""

from django.db import models


class Shop(models.Model):
    name = models.CharField(max_length=120)
    code = models.CharField(max_length=40, unique=True)
    is_active = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.code
