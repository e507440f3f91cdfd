"""The organization roles as the toolkit sees them (TENANCY_ROLES), and who may do what."""

from tenancy import Policy, RoleSet

# Membership.Role's values, lowest reach first.
ROLES = RoleSet(["staff", "owner"], default=None)

# Add or remove berths: owners only.
MANAGE_BERTHS = Policy("ManageBerths", {"owner"})
