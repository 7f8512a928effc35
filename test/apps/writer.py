"""A writer for test/tap/apps.pl, through the Python shard map directly
(MODE map), SQLAlchemy's horizontal sharding (sqlalchemy) or the Django
router (django): inserts into the given shards in turn until the stop file
exists, reads every row back by its ID, and writes one line per
acknowledged insert to the output file: "ID SHARD RETRIES MILLISECONDS".
Any error but the shard map's own retries ends it with status 1.

The map is reloaded only when an error of the moved shard asks for it, never
on its interval (reload_interval = 1 hour), so that every move is seen as
retries whatever the timing; a frozen shard is waited for up to a minute
(retry_deadline), as long as a cut-over may take on a loaded machine.

    writer.py MODE ROUTER NODES_JSON SHARDS STOP_FILE OUT_FILE
"""
import json
import os
import sys
import time

from shardid_router import ShardMap

mode, router, nodes, shards, stop, out = sys.argv[1:7]
nodes = json.loads(nodes)
shards = [int(s) for s in shards.split(",")]
MAP = {"reload_interval": 3600.0, "retry_deadline": 60.0}

if mode == "map":
    m = ShardMap(router, nodes, **MAP)

    def insert(shard, body):
        return m.run(shard, lambda conn: conn.execute(
            f"INSERT INTO {m.schema_for_shard(shard)}.posts (user_id, body) VALUES (%s, %s) RETURNING id",
            (shard, body)).fetchone()[0])

    def lookup(id):
        row = m.run(m.shard_of(id), lambda conn: conn.execute(
            f"SELECT body FROM {m.schema_for_shard(m.shard_of(id))}.posts WHERE id = %s", (id,)).fetchone())
        return row and row[0]

elif mode == "sqlalchemy":
    from sqlalchemy import BigInteger, Column, FetchedValue, Text
    from sqlalchemy.orm import declarative_base

    from shardid_sqlalchemy import engines_for, sharded_sessionmaker, transaction

    Base = declarative_base()

    class Post(Base):
        __tablename__ = "posts"
        __table_args__ = {"schema": "shard"}
        id = Column(BigInteger, primary_key=True, server_default=FetchedValue())
        user_id = Column(BigInteger, nullable=False)
        body = Column(Text, nullable=False)

        @property
        def shard(self):
            return self.user_id

    m = ShardMap(router, nodes, **MAP)
    Session = sharded_sessionmaker(m, engines_for(nodes, pool_size=2))

    def insert(shard, body):
        def add(session):
            post = Post(user_id=shard, body=body)
            session.add(post)
            session.flush()
            return post.id

        return transaction(m, Session, shard, add)

    def lookup(id):
        return transaction(m, Session, m.shard_of(id), lambda s: (lambda p: p and p.body)(s.get(Post, id)))

elif mode == "django":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "clients", "python", "examples", "django_app"))
    import django
    from django.conf import settings

    import shardid_django

    settings.configure(DATABASES={"default": shardid_django.databases({"r": router})["r"],
                                  **shardid_django.databases(nodes)},
                       DATABASE_ROUTERS=["shardid_django.ShardRouter"],
                       SHARDID_SHARD_MAP=lambda: ShardMap(router, nodes, **MAP),
                       INSTALLED_APPS=["blog"], USE_TZ=True)
    django.setup()
    from blog.models import Post

    m = shardid_django.get_shard_map()

    def insert(shard, body):
        return shardid_django.run(shard, lambda: shardid_django.shard_model(Post, shard).objects.create(
            user_id=shard, body=body)).id

    def lookup(id):
        shard = m.shard_of(id)
        return shardid_django.run(shard, lambda: (lambda p: p and p.body)(
            shardid_django.shard_model(Post, shard).objects.filter(id=id).first()))

else:
    sys.exit(f"unknown mode {mode}")

n = 0
with open(out, "w", encoding="ascii") as f:
    while not os.path.exists(stop):
        shard = shards[n % len(shards)]
        n += 1
        body = f"{mode} writer {n}"
        before, start = m.retries, time.monotonic()
        id = insert(shard, body)
        f.write(f"{id} {shard} {m.retries - before} {(time.monotonic() - start) * 1000:.1f}\n")
        f.flush()
        found = lookup(id)
        if found != body:
            sys.exit(f"{mode}: lookup by ID {id} on node {m.node_for_id(id)} found {found!r}")
        time.sleep(0.002)
m.close()
print(f"{mode} writer: {n} inserts, {m.retries} retries, {m.reloads} reloads of the map")
