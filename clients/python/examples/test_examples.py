"""The example apps against a router and two nodes with 16 shards (0-7 on
a, 8-15 on b; test/tap/apps.pl): each writes posts of users 3, 10 and 19
(shards 3, 10, 3), reads them back by ID and prints JSON, checked here.

    SHARDID_ROUTER='host=... dbname=app' SHARDID_NODES='{"a": "...", "b": "..."}' \\
        PYTHONPATH=.. python3 -m pytest test_examples.py
"""
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif("SHARDID_ROUTER" not in os.environ,
                                reason="SHARDID_ROUTER not set (test/tap/apps.pl sets it)")
HERE = os.path.dirname(os.path.abspath(__file__))


def run_example(path):
    out = subprocess.run([sys.executable, os.path.join(HERE, path)], check=True, capture_output=True,
                         text=True).stdout
    print(f"{path}: {out.strip()}")
    return json.loads(out)


def test_sqlalchemy_app():
    """Inserts in the users' shards, get() by ID, IN by ID, fan-out."""
    o = run_example("sqlalchemy_app.py")
    ids = o["ids"]
    assert o["shards"] == [3, 10, 3], o["shards"]
    assert o["by_id"] == {ids[0]: [3, "sqlalchemy 3", "a"], ids[1]: [10, "sqlalchemy 10", "b"],
                          ids[2]: [19, "sqlalchemy 19", "a"]}, o["by_id"]
    assert o["in_list"] == sorted(ids) and o["fan_out"] == sorted(ids), o
    assert all(int(i) > 2**53 for i in ids)


def test_django_app():
    """Inserts and bulk_create in the users' shards, lookups by ID."""
    o = run_example(os.path.join("django_app", "app.py"))
    ids = o["ids"]
    assert o["shards"] == [3, 10, 3] and o["nodes"] == ["a", "b", "a"], o
    assert o["found"] == {i: {"id": i, "user_id": u, "body": f"django {u}"} for i, u in zip(ids, (3, 10, 19))}, o["found"]
    assert [s for _, s in o["bulk"]] == [3, 3, 3] and all(int(i) > 2**53 for i, _ in o["bulk"]), o["bulk"]
    print(f"django {o['django']}")
