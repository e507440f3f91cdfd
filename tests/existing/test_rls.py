"""Row-level security in an existing project (issue 35), set up as docs/existing-project.md
says: the tracker declares ``projects.Project`` tenant-owned by ``organization`` in
``projects/apps.py``, keeps its plain ``Project.objects``, and a careless tool that uses it
sees and changes only its organization's projects; the same careless queries in the
project's own view, admin and management command still see every organization's.

A copy of the tracker with ``tests/existing/careless`` added (careless tools, a view, an admin
registration and a command; A2A and the database task worker, as a team adds them) is migrated
from zero on a fresh PostgreSQL database by a team's user that may not create roles, the
database owner running ``rls_install --sql``. The careless tools are called over ``/mcp`` in
both eras, as a task run by ``manage.py db_worker``, as an A2A skill, through ``manage.py
mcp_call`` and ``MCPClient``, and over ``/mcp`` served through PgBouncer in transaction mode.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from cluck.devpgbouncer import pgbouncer
from mcp_tools.testing.client import ERAS

from tests.careless import seen_only
from tests.deploy.server_connections import POOL, every_server_connection
from tests.existing.harness import PROJECT, Tracker, copy_tracker, orm, seed
from tests.mutations import mutation
from tests.project_harness import ROOT, fenced_blocks, postgres_database, project_env
from tests.shop.mcp_story import call_tool
from tests.shop.rls_paths import db_worker, skill_result, task_result

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

MEMBERS = [("acme", "ada@acme.example", "owner"), ("globex", "cy@globex.example", "owner")]

# Two projects per organization (one named "victim"), made by the project's own code.
SEED = """
for slug in ["acme", "globex"]:
    organization = Organization.objects.get(slug=slug)
    Project.objects.create(organization=organization, name="kept")
    Project.objects.create(organization=organization, name="victim")
print("ORGS=" + ",".join(str(Organization.objects.get(slug=s).pk) for s in ["acme", "globex"]))
"""

# Every project, as the project's own code sees it.
HOST_ROWS = """
import json
rows = Project.objects.order_by("organization__slug", "name")
print("ROWS=" + json.dumps([[p.organization.slug, p.name, p.description] for p in rows]))
"""

# The careless queries in the project's own view, admin changelist and command.
HOST_PATHS = """
import io, json
from django.core.management import call_command
from django.test import Client
admin = User.objects.filter(email="root@acme.example").first() or User.objects.create_superuser(
    "root@acme.example", "a-long-and-unusual-password"
)
client = Client()
client.force_login(admin)
view = client.get("/careless/")
assert view.status_code == 200, view.content
page = client.get("/admin/projects/project/")
assert page.status_code == 200, page.content
out = io.StringIO()
call_command("careless_projects", stdout=out)
print("HOST=" + json.dumps({
    "view": view.json(),
    "admin": sorted({p.organization_id for p in page.context_data["cl"].result_list}),
    "command": json.loads(out.getvalue()),
}))
"""

# The careless read through the in-process test client, in each era.
IN_PROCESS = """
import json
from mcp_tools.testing.client import ERAS, MCPClient
user = User.objects.get(email="ada@acme.example")
acme = Organization.objects.get(slug="acme")
seen = {
    era: MCPClient(user=user, tenant=acme, era=era).call_tool("careless_read", {}).structured
    for era in ERAS
}
print("SEEN=" + json.dumps(seen))
"""


@dataclass
class CarelessTracker:
    tracker: Tracker
    url: str
    tokens: dict[str, str]
    mine: int
    other: int
    migrated: str
    checked: str

    def shell(self, script: str, prefix: str) -> Any:
        (line,) = [
            line for line in orm(self.tracker, script).splitlines() if line.startswith(prefix)
        ]
        return json.loads(line.removeprefix(prefix))

    def call(self, era: str, name: str, **arguments: Any) -> Any:
        return call_tool(self.url, self.tokens["ada@acme.example@acme"], era, name, **arguments)


@contextmanager
def team_database() -> Iterator[tuple[str, str]]:
    """A fresh database owned by a new login role that is no superuser and may not create
    roles (the team's database user on a managed database): ``(its URL, the owner's URL)``,
    the owner being the test run's superuser (the DBA). Both dropped afterwards."""
    try:
        database = postgres_database("tracker_rls")
        owner_url = database.__enter__()
    except LookupError as missing:
        pytest.skip(str(missing))
    user = f"tracker_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(owner_url)
    try:
        with psycopg.connect(owner_url, autocommit=True) as connection:
            connection.execute(f"CREATE ROLE {user} LOGIN PASSWORD 'team' NOSUPERUSER NOCREATEROLE")
            connection.execute(f'ALTER DATABASE "{parts.path.lstrip("/")}" OWNER TO {user}')
        server = parts.netloc.rpartition("@")[2]  # host:port, or empty for a socket
        yield parts._replace(netloc=f"{user}:team@{server}").geturl(), owner_url
    finally:
        database.__exit__(None, None, None)
        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as connection:
            connection.execute(f"DROP ROLE IF EXISTS {user}")


@pytest.fixture(scope="module")
def careless(tmp_path_factory: Any) -> Iterator[CarelessTracker]:
    """The tracker plus the careless app on a fresh PostgreSQL database, set up as
    docs/existing-project.md section 6 says for a team whose database user may not create
    roles: ``migrate`` (which warns and installs nothing), ``rls_install --sql`` run by the
    database owner, ``check --database default``; two organizations with projects; uvicorn
    serving it."""
    with team_database() as (team_url, owner_url):
        tracker = copy_tracker(Path(tmp_path_factory.mktemp("rls")))
        shutil.copytree(
            PROJECT / "careless",
            tracker.path / "careless",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        tracker.env = project_env(team_url, DJANGO_SETTINGS_MODULE="careless.settings")
        migrated = tracker.manage("migrate")
        block = tracker.manage("rls_install", "--sql")
        with psycopg.connect(owner_url, autocommit=True) as connection:
            connection.execute(block.encode())  # what the owner's psql -f runs
        checked = tracker.manage("check", "--database", "default")  # an error fails it
        tokens = seed(tracker, MEMBERS)
        (line,) = [line for line in orm(tracker, SEED).splitlines() if line.startswith("ORGS=")]
        mine, other = map(int, line.removeprefix("ORGS=").split(","))
        with tracker.serve("uvicorn") as served:
            yield CarelessTracker(tracker, served, tokens, mine, other, migrated, checked)


@pytest.mark.parametrize("era", ["handshake", "modern"])
@mutation(
    "tests/existing/projects/apps.py",
    find='rls.declare("projects.Project", field="organization")',
    replace="pass",
)
@mutation(
    "tenancy/rls/install.py",
    find="AS PERMISSIVE FOR ALL TO {quote(role)} ",
    replace="AS PERMISSIVE FOR ALL TO CURRENT_USER ",
)
def test_a_careless_read_over_mcp_sees_only_its_organization(
    careless: CarelessTracker, era: str
) -> None:
    """Mutation: the tracker's declaration of Project removed, or the tenant policy bound to
    the connecting user instead of the tools' role → the careless queries reach the other
    organization's projects (or none) → red."""
    reply = careless.call(era, "careless_read")
    assert reply.is_error is False, reply
    seen_only(reply.structured_content, careless.mine)


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_through_mcp_call_and_mcp_client_sees_only_its_organization(
    careless: CarelessTracker,
) -> None:
    """``manage.py mcp_call`` and ``MCPClient`` run the tool in-process, in both eras.

    Mutation: the read's role and tenant left out → the in-process call runs as the connecting
    user and sees both organizations → red."""
    for era in ERAS:
        out = careless.tracker.manage(
            "mcp_call",
            "careless_read",
            "--organization",
            "acme",
            "--email",
            "ada@acme.example",
            "--era",
            era,
        )
        seen_only(json.loads(out[: out.rindex("}") + 1]), careless.mine)
    by_era = careless.shell(IN_PROCESS, "SEEN=")
    assert len(by_era) == 2
    for seen in by_era.values():
        seen_only(seen, careless.mine)


@mutation(
    "docs/existing-project.md",
    find='        "BACKEND": "django_tasks_db.DatabaseBackend",\n',
    replace='        "BACKEND": "django_tasks_db.Backend",\n',
)
def test_the_guides_database_worker_block_is_what_the_careless_tracker_runs() -> None:
    """``careless/settings.py`` adds the database worker with section 14's block of
    docs/existing-project.md, verbatim: the task path above runs what the guide says.

    Mutation: the guide's block changed → it is no longer the tested settings → red."""
    (block,) = [
        text
        for _, text in fenced_blocks(ROOT / "docs" / "existing-project.md")
        if text.startswith("# settings: MCP tasks on the database worker")
    ]
    assert block in (PROJECT / "careless" / "settings.py").read_text()


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_as_a_task_on_the_database_worker_sees_only_its_organization(
    careless: CarelessTracker,
) -> None:
    """The task is accepted over /mcp by uvicorn and run by the tracker's ``manage.py
    db_worker`` (docs/existing-project.md section 14), another process with its own connection.

    Mutation: the set_config left out of a read → the worker's run of the tool reaches the
    other organization → red."""
    with db_worker(careless.tracker):
        seen = task_result(careless.url, careless.tokens["ada@acme.example@acme"], "careless_read")
    seen_only(seen, careless.mine)


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_as_an_a2a_skill_sees_only_its_organization(
    careless: CarelessTracker,
) -> None:
    """``a2a_tools`` serves the careless read as a skill on ``POST /a2a``.

    Mutation: the set_config left out of a read → the skill reaches the other organization
    → red."""
    seen = skill_result(careless.url, careless.tokens["ada@acme.example@acme"], "careless_read")
    seen_only(seen, careless.mine)


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
@mutation(
    "tenancy/rls/scope.py",
    find="_TAKE = \"SELECT set_config('role', %s, true), set_config(%s, %s, true)\"",
    replace="_TAKE = \"SELECT set_config('role', %s, false), set_config(%s, %s, false)\"",
)
def test_careless_tools_behind_pgbouncer_stay_in_their_organization_and_leave_nothing_set(
    careless: CarelessTracker,
) -> None:
    """uvicorn serves the tracker with its ``DATABASE_URL`` (the team's user) on a PgBouncer in
    transaction mode of ``POOL`` server connections: the careless read sees only its
    organization, the careless update changes only its projects, the project planted in the
    other organization is refused, and the next client of each server connection is the
    project's own code again, seeing every organization.

    Mutation: the set_config left out of a read → the read reaches the other organization
    → red. Mutation: the role and tenant set for the session (``set_config(..., false)``)
    instead of the transaction → a pooled server connection keeps the tools' role and the
    organization for its next client → red."""
    before = careless.shell(HOST_ROWS, "ROWS=")
    token = careless.tokens["ada@acme.example@acme"]
    with (
        pgbouncer(careless.tracker.env["DATABASE_URL"], pool_size=POOL) as url,
        careless.tracker.serve("uvicorn", DATABASE_URL=url) as served,
    ):
        for _ in range(2 * POOL):  # so that every server connection serves the tools
            read = call_tool(served, token, "modern", "careless_read")
            seen_only(read.structured_content, careless.mine)
        updated = call_tool(served, token, "modern", "careless_write", mode="update",
                            idempotencyKey="pgbouncer-update")  # fmt: skip
        planted = call_tool(served, token, "modern", "careless_write", mode="bulk_create",
                            organizationId=careless.other,
                            idempotencyKey="pgbouncer-plant")  # fmt: skip
        after = every_server_connection(url, "projects_project", "organization_id")
    assert updated.structured_content["rows"] == 2, updated
    assert planted.is_error is True, planted
    theirs = [row for row in before if row[0] == "globex"]
    assert [row for row in careless.shell(HOST_ROWS, "ROWS=") if row[0] == "globex"] == theirs
    # The project's next transaction on each server connection: no role, no organization.
    assert after == [("none", "", "off", 2)] * POOL, after


@mutation(
    "mcp_tools/execution/writes.py",
    find="        rls.take(ctx.tenant.id)\n",
    replace="        pass\n",
)
def test_careless_writes_over_mcp_stay_in_their_organization(careless: CarelessTracker) -> None:
    """A queryset update and delete change only the caller's projects; a bulk_create keyed to
    the other organization is refused and never stored.

    Mutation: the write's statement that takes the role left out → the update and delete reach
    the other organization and the planted project is stored → red."""
    before = careless.shell(HOST_ROWS, "ROWS=")
    updated = careless.call("modern", "careless_write", mode="update", idempotencyKey="w-1")
    assert updated.structured_content["rows"] == 2, updated
    deleted = careless.call("handshake", "careless_write", mode="delete", idempotencyKey="w-2")
    assert deleted.structured_content["rows"] == 1, deleted
    planted = careless.call(
        "modern",
        "careless_write",
        mode="bulk_create",
        organizationId=careless.other,
        idempotencyKey="w-3",
    )
    assert planted.is_error is True, planted

    after = careless.shell(HOST_ROWS, "ROWS=")
    theirs = [row for row in before if row[0] == "globex"]
    assert [row for row in after if row[0] == "globex"] == theirs  # untouched, none planted
    assert [row for row in after if row[0] == "acme"] == [["acme", "kept", "careless"]]


@mutation(
    "tenancy/rls/install.py",
    find='        f"CREATE POLICY {HOST_POLICY} ON {name} AS PERMISSIVE FOR ALL TO PUBLIC "\n'
    '        f"USING ({host}) WITH CHECK ({host})",\n',
    replace="",
)
def test_the_projects_own_view_admin_and_command_still_see_every_organization(
    careless: CarelessTracker,
) -> None:
    """No regression for the host project: the same careless queries in its own view, admin
    changelist and management command, which never take the tools' role, see both
    organizations' projects, as before row-level security.

    The project connects as the tables' owner, no superuser (a superuser would see every row
    whatever the policies): FORCE makes the policies bind it, and the host policy admits it.

    Mutation: the host policy dropped → the forced tables admit no row to the project's own
    code → red."""
    both = sorted([careless.mine, careless.other])
    rows = len(careless.shell(HOST_ROWS, "ROWS="))
    assert rows >= 3  # both organizations' rows, whatever the writes left
    everything = {
        "all": both,
        "related": both,
        "select_related": both,
        "raw": both,
        "values": both,
        "aggregate": rows,
    }
    seen = careless.shell(HOST_PATHS, "HOST=")
    assert seen == {"view": everything, "admin": both, "command": everything}, seen


@mutation(
    "tenancy/rls/install.py",
    find='    grantee = quote(user) if user else "CURRENT_USER"\n',
    replace='    grantee = "CURRENT_USER"\n',
)
def test_the_database_owner_installs_what_the_teams_user_may_not(
    careless: CarelessTracker,
) -> None:
    """The team's user may not create roles: ``migrate`` says so and names the command; the
    block ``rls_install --sql`` printed, run by the database owner, completes the install.

    Mutation: the block grants the role to CURRENT_USER (whoever runs it: the owner) instead
    of the project's user → the project's user cannot take the role → tenancy_rls.E001 fails
    ``check --database default`` → red."""
    assert "row-level security not installed" in careless.migrated, careless.migrated
    assert "rls_install --sql" in careless.migrated
    assert "System check identified no issues" in careless.checked, careless.checked
