"""The REST adapter (DRF) over ``cluck.services`` and ``cluck.selectors``."""
