"""An application on Django with shardid_django's database router: one
database alias per node, posts in the shard of their user (user_id % 16).

    SHARDID_ROUTER='host=... dbname=app' SHARDID_NODES='{"a": "...", "b": "..."}' python3 app.py

examples/test_examples.py runs it against a router and two nodes
(test/tap/apps.pl).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import django
from django.conf import settings

import shardid_django
from shardid_router import ShardMap

ROUTER = os.environ["SHARDID_ROUTER"]
NODES = json.loads(os.environ["SHARDID_NODES"])
settings.configure(
    DATABASES={"default": shardid_django.databases({"router": ROUTER})["router"],
               **shardid_django.databases(NODES)},
    DATABASE_ROUTERS=["shardid_django.ShardRouter"],
    SHARDID_SHARD_MAP=lambda: ShardMap(ROUTER, NODES),
    INSTALLED_APPS=["blog"],
    USE_TZ=True,
)
django.setup()

from blog.models import Post  # noqa: E402
from shardid_django import get_shard_map, run, shard_model  # noqa: E402


def create_post(user_id, body):
    shard = user_id % 16
    # in a transaction on the shard's node; retried while the shard moves
    return run(shard, lambda: shard_model(Post, shard).objects.create(user_id=user_id, body=body))


def get_post(id):
    m = get_shard_map()
    return shard_model(Post, m.shard_of(id)).objects.get(id=id)  # the router sends it to the ID's node


posts = [create_post(user, f"django {user}") for user in (3, 10, 19)]
m = get_shard_map()
found = {str(p.id): get_post(p.id).as_json() for p in posts}
# bulk_create returns the IDs too (INSERT ... RETURNING)
bulk = run(3, lambda: shard_model(Post, 3).objects.bulk_create(
    [shard_model(Post, 3)(user_id=3, body=f"django bulk {i}") for i in range(3)]))
print(json.dumps({
    "ids": [str(p.id) for p in posts],
    "shards": [m.shard_of(p.id) for p in posts],
    "nodes": [m.node_for_id(p.id) for p in posts],
    "found": found,
    "bulk": [[str(p.id), m.shard_of(p.id)] for p in bulk],
    "django": django.get_version(),
}))
m.close()
