"""The organization roles as the toolkit sees them (TENANCY_ROLES), and who may do what."""

from tenancy import Policy, RoleSet

# Membership.Role's values, lowest reach first; a membership always stores one.
ROLES = RoleSet(["member", "admin", "owner"], default=None)

# Archive projects: what ProjectPermission lets owners and admins do on the API.
MANAGE_PROJECTS = Policy("ManageProjects", {"owner", "admin"})
