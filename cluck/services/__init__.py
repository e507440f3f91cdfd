"""Writes. ``<entity>_<action>(*, caller, ...)``, keyword-only; each owns its transaction."""
