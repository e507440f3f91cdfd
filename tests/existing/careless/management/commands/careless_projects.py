import json
from typing import Any

from django.core.management.base import BaseCommand

from careless.queries import careless_read


class Command(BaseCommand):
    help = "Print what the careless queries reach, as the project's own command."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(json.dumps(careless_read()))
