"""Customer writes."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from cluck.caller import Caller
from cluck.models import Customer
from cluck.services._fields import FieldErrors
from cluck.services.audit import audit_record

NAME_MAX = 200
PHONE_MAX = 50
EMAIL_MAX = 254
ADDRESS_MAX = 500
NOTE_MAX = 1000


@transaction.atomic
def customer_create(
    *,
    caller: Caller,
    name: str | None,
    phone: str | None,
    email: str | None = None,
    address: str | None = None,
    note: str | None = None,
) -> Customer:
    """Create a customer on the caller's farm (brief §6.8) and audit ``Customer.Create``.

    Text is trimmed and blanks become ``None``. Duplicate names are legal (resolution by name
    reports the ambiguity instead).

    Raises:
        FieldError: every failing field at once — ``Customer.Name.Required``,
            ``Customer.Name.TooLong``, ``Customer.Phone.Required``, ``Customer.Email.Invalid``, …
    """
    errors = FieldErrors()
    clean_name = errors.text(
        name,
        field="name",
        code_prefix="Customer.Name",
        max_length=NAME_MAX,
        required=True,
        label="Name",
    )
    clean_phone = errors.text(
        phone,
        field="phone",
        code_prefix="Customer.Phone",
        max_length=PHONE_MAX,
        required=True,
        label="Phone",
    )
    clean_email = errors.text(
        email,
        field="email",
        code_prefix="Customer.Email",
        max_length=EMAIL_MAX,
        required=False,
        label="Email",
    )
    if clean_email is not None and len(clean_email) <= EMAIL_MAX:
        try:
            validate_email(clean_email)
        except ValidationError:
            errors.add("email", "Customer.Email.Invalid", "Email is not a valid address.")
    clean_address = errors.text(
        address,
        field="address",
        code_prefix="Customer.Address",
        max_length=ADDRESS_MAX,
        required=False,
        label="Address",
    )
    clean_note = errors.text(
        note,
        field="note",
        code_prefix="Customer.Note",
        max_length=NOTE_MAX,
        required=False,
        label="Note",
    )
    errors.raise_if_any()
    customer = Customer.objects.for_tenant(caller.tenant).create(
        farm=caller.farm,
        name=clean_name,
        phone=clean_phone,
        email=clean_email,
        address=clean_address,
        note=clean_note,
    )
    audit_record(
        caller=caller,
        action="Customer.Create",
        entity_type="Customer",
        entity_id=customer.pk,
        details={"name": customer.name},
    )
    return customer
