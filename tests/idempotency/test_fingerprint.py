from __future__ import annotations

import hashlib

import pytest

from idempotency import fingerprint_bytes, fingerprint_json, sha256_hex


def test_sha256_hex_is_lower_case_hex_of_utf8() -> None:
    assert (
        sha256_hex("POST:/api/v1/customers/")
        == hashlib.sha256(b"POST:/api/v1/customers/").hexdigest()
    )
    assert len(sha256_hex("ü")) == 64


def test_fingerprint_json_is_canonical() -> None:
    a = fingerprint_json({"b": 1, "a": ["ü", {"y": 2, "x": 1}]})
    b = fingerprint_json({"a": ["ü", {"x": 1, "y": 2}], "b": 1})
    assert a == b
    expected = '{"a":["ü",{"x":1,"y":2}],"b":1}'.encode()
    assert a == fingerprint_bytes(expected)


def test_fingerprint_json_distinguishes_values() -> None:
    assert fingerprint_json({"a": 1}) != fingerprint_json({"a": "1"})


def test_fingerprint_json_refuses_what_json_cannot_represent() -> None:
    with pytest.raises(TypeError):
        fingerprint_json({"a": object()})
