from rest_framework.test import APITestCase

from accounts.models import User
from orgs.models import Membership, Organization, role_of


class OrganizationApiTests(APITestCase):
    def setUp(self) -> None:
        self.ada = User.objects.create_user("ada@example.com", "pw-ada-0123456789")
        self.acme = Organization.objects.create(name="Acme", slug="acme")
        self.globex = Organization.objects.create(name="Globex", slug="globex")
        Membership.objects.create(user=self.ada, organization=self.acme, role="owner")

    def test_a_user_lists_only_their_organizations_with_their_role(self) -> None:
        self.client.force_authenticate(self.ada)
        response = self.client.get("/api/organizations/")
        self.assertEqual(response.status_code, 200)
        self.assertEqual(response.data, [{"slug": "acme", "name": "Acme", "role": "owner"}])
        self.assertEqual(self.client.get("/api/organizations/globex/").status_code, 404)

    def test_role_of(self) -> None:
        self.assertEqual(role_of(self.ada, self.acme), "owner")
        self.assertIsNone(role_of(self.ada, self.globex))

    def test_one_membership_per_user_and_organization(self) -> None:
        from django.db import IntegrityError, transaction

        with self.assertRaises(IntegrityError), transaction.atomic():
            Membership.objects.create(user=self.ada, organization=self.acme, role="member")
