from django.test import TestCase
from django.urls import reverse
from rest_framework.test import APITestCase

from accounts.models import User

PASSWORD = "a-long-and-unusual-password"


class UserManagerTests(TestCase):
    def test_create_user_normalizes_the_email_and_needs_one(self) -> None:
        user = User.objects.create_user("Ada@Example.COM", PASSWORD)
        self.assertEqual(user.email, "ada@example.com")
        self.assertTrue(user.check_password(PASSWORD))
        self.assertFalse(user.is_staff)
        with self.assertRaises(ValueError):
            User.objects.create_user("", PASSWORD)

    def test_a_user_without_a_password_cannot_sign_in_with_one(self) -> None:
        user = User.objects.create_user("nopass@example.com")
        self.assertFalse(user.has_usable_password())

    def test_create_superuser(self) -> None:
        admin = User.objects.create_superuser("root@example.com", PASSWORD)
        self.assertTrue(admin.is_staff and admin.is_superuser)


class AllauthLoginTests(TestCase):
    def setUp(self) -> None:
        User.objects.create_user("ada@example.com", PASSWORD)

    def test_pages_that_need_a_user_send_people_to_the_allauth_login(self) -> None:
        response = self.client.get(reverse("home"))
        self.assertRedirects(
            response, f"{reverse('account_login')}?next=/", fetch_redirect_response=False
        )

    def test_people_sign_in_with_their_email(self) -> None:
        response = self.client.post(
            reverse("account_login"), {"login": "ada@example.com", "password": PASSWORD}
        )
        self.assertRedirects(response, reverse("home"), fetch_redirect_response=False)
        self.assertContains(self.client.get(reverse("home")), "Signed in as ada@example.com")

    def test_a_wrong_password_stays_on_the_login_page(self) -> None:
        response = self.client.post(
            reverse("account_login"), {"login": "ada@example.com", "password": "wrong"}
        )
        self.assertEqual(response.status_code, 200)
        self.assertNotIn("_auth_user_id", self.client.session)


class JwtLoginTests(APITestCase):
    def setUp(self) -> None:
        User.objects.create_user("ada@example.com", PASSWORD)

    def test_email_and_password_give_an_access_and_a_refresh_token(self) -> None:
        response = self.client.post(
            "/api/token/", {"email": "ada@example.com", "password": PASSWORD}, format="json"
        )
        self.assertEqual(response.status_code, 200, response.content)
        self.assertEqual(set(response.data), {"access", "refresh"})
        refreshed = self.client.post(
            "/api/token/refresh/", {"refresh": response.data["refresh"]}, format="json"
        )
        self.assertEqual(refreshed.status_code, 200, refreshed.content)
        self.assertIn("access", refreshed.data)

    def test_a_wrong_password_gets_no_token(self) -> None:
        response = self.client.post(
            "/api/token/", {"email": "ada@example.com", "password": "wrong"}, format="json"
        )
        self.assertEqual(response.status_code, 401)

    def test_a_forged_token_is_refused(self) -> None:
        self.client.credentials(HTTP_AUTHORIZATION="Bearer not.a.jwt")
        response = self.client.get("/api/projects/")
        self.assertEqual(response.status_code, 401)
        self.assertEqual(response.data["code"], "token_not_valid")
