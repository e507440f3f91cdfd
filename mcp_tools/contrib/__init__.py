"""Optional integrations with other libraries (Django REST framework)."""
