from django.http import HttpRequest, HttpResponse
from django.test import override_settings
from django.urls import path
from rest_framework.test import APIClient, APITestCase

from accounts.models import User
from orgs.models import Membership, Organization
from projects import services
from projects.models import Project

PASSWORD = "a-long-and-unusual-password"


def boom(request: HttpRequest) -> HttpResponse:
    services.project_create(
        organization=Organization.objects.get(slug="acme"), user=None, name="Doomed"
    )
    raise RuntimeError("after the write")


# ROOT_URLCONF of the ATOMIC_REQUESTS test.
urlpatterns = [path("boom/", boom)]


class ProjectApiTests(APITestCase):
    def setUp(self) -> None:
        self.acme = Organization.objects.create(name="Acme", slug="acme")
        self.globex = Organization.objects.create(name="Globex", slug="globex")
        self.owner = self._member("owner@acme.example", self.acme, "owner")
        self.member = self._member("member@acme.example", self.acme, "member")
        self.outsider = self._member("boss@globex.example", self.globex, "owner")
        self.rocket = Project.objects.create(organization=self.acme, name="Rocket")
        self.secret = Project.objects.create(organization=self.globex, name="Secret")

    def _member(self, email: str, organization: Organization, role: str) -> User:
        user = User.objects.create_user(email, PASSWORD)
        Membership.objects.create(user=user, organization=organization, role=role)
        return user

    def _jwt(self, email: str) -> str:
        response = self.client.post(
            "/api/token/", {"email": email, "password": PASSWORD}, format="json"
        )
        self.assertEqual(response.status_code, 200, response.content)
        return str(response.data["access"])

    def test_an_anonymous_request_is_401_with_the_jwt_challenge(self) -> None:
        response = self.client.get("/api/projects/")
        self.assertEqual(response.status_code, 401)
        self.assertEqual(response["WWW-Authenticate"], 'Bearer realm="api"')
        self.assertEqual(response.data["detail"].code, "not_authenticated")

    def test_a_jwt_lists_the_projects_of_the_callers_organizations(self) -> None:
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {self._jwt('member@acme.example')}")
        response = self.client.get("/api/projects/")
        self.assertEqual(response.status_code, 200)
        self.assertEqual([p["name"] for p in response.data], ["Rocket"])
        self.assertEqual(self.client.get(f"/api/projects/{self.secret.pk}/").status_code, 404)

    def test_the_session_of_a_signed_in_user_works_too(self) -> None:
        self.client.login(email="boss@globex.example", password=PASSWORD)
        response = self.client.get("/api/projects/")
        self.assertEqual(response.status_code, 200)
        self.assertEqual([p["name"] for p in response.data], ["Secret"])

    def test_session_writes_need_the_csrf_token(self) -> None:
        client = APIClient(enforce_csrf_checks=True)
        client.login(email="member@acme.example", password=PASSWORD)
        body = {"organization": "acme", "name": "Balloon"}
        response = client.post("/api/projects/", body, format="json")
        self.assertEqual(response.status_code, 403)
        self.assertIn("CSRF", str(response.data["detail"]))

    def test_a_member_creates_a_project_in_their_organization(self) -> None:
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {self._jwt('member@acme.example')}")
        body = {"organization": "acme", "name": "Balloon", "description": "Up"}
        response = self.client.post("/api/projects/", body, format="json")
        self.assertEqual(response.status_code, 201, response.content)
        created = Project.objects.get(pk=response.data["id"])
        self.assertEqual((created.organization, created.created_by), (self.acme, self.member))

    def test_a_name_is_taken_once_per_organization(self) -> None:
        self.client.force_authenticate(self.member)
        response = self.client.post(
            "/api/projects/", {"organization": "acme", "name": "rocket"}, format="json"
        )
        self.assertEqual(response.status_code, 400)
        self.assertIn("name", response.data)

    def test_nobody_creates_projects_in_another_organization(self) -> None:
        self.client.force_authenticate(self.member)
        body = {"organization": "globex", "name": "Trojan"}
        response = self.client.post("/api/projects/", body, format="json")
        self.assertEqual(response.status_code, 403)
        self.assertFalse(Project.objects.filter(name="Trojan").exists())

    def test_only_owners_and_admins_archive_and_delete(self) -> None:
        self.client.force_authenticate(self.member)
        self.assertEqual(
            self.client.post(f"/api/projects/{self.rocket.pk}/archive/").status_code, 403
        )
        self.assertEqual(self.client.delete(f"/api/projects/{self.rocket.pk}/").status_code, 403)
        self.client.force_authenticate(self.owner)
        archived = self.client.post(f"/api/projects/{self.rocket.pk}/archive/")
        self.assertEqual(archived.status_code, 200)
        self.assertTrue(archived.data["archived"])
        self.assertEqual(self.client.get("/api/projects/").data, [])
        self.assertEqual(len(self.client.get("/api/projects/?archived").data), 1)
        self.assertEqual(self.client.delete(f"/api/projects/{self.rocket.pk}/").status_code, 204)

    def test_a_role_change_applies_to_the_next_request(self) -> None:
        self.client.force_authenticate(self.member)
        Membership.objects.filter(user=self.member).update(role="admin")
        self.assertEqual(
            self.client.post(f"/api/projects/{self.rocket.pk}/archive/").status_code, 200
        )

    @override_settings(ROOT_URLCONF="projects.tests")
    def test_a_failed_request_writes_nothing(self) -> None:
        # ATOMIC_REQUESTS: the view's writes roll back with its error.
        self.client.raise_request_exception = False
        response = self.client.post("/boom/")
        self.assertEqual(response.status_code, 500)
        self.assertFalse(Project.objects.filter(name="Doomed").exists())
