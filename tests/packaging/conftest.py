"""The wheel and the sdist, built once per run for every packaging test."""

from __future__ import annotations

from typing import Any

import pytest

from tests.packaging.test_distribution import Dists, build_dists


@pytest.fixture(scope="session")
def dists(tmp_path_factory: Any) -> Dists:
    return build_dists(tmp_path_factory.mktemp("dist"))
