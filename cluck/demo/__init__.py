"""Demo data for ``manage.py seed_demo``: ``production`` (farms, houses, flocks, users, two
weeks of submitted entries) then ``commerce`` (customers, orders, payments), both through the
real services with the system actor, both idempotent."""
