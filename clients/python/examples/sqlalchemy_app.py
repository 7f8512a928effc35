"""An application on SQLAlchemy's horizontal sharding over a shardid ShardMap
(shardid_sqlalchemy). Posts live in the shard of their user (user_id % 16),
in every shard's table posts; the model names the placeholder schema "shard".

    SHARDID_ROUTER='host=... dbname=app' SHARDID_NODES='{"a": "...", "b": "..."}' python3 sqlalchemy_app.py

examples/test_examples.py runs it against a router and two nodes
(test/tap/apps.pl).
"""
import json
import os

from sqlalchemy import BigInteger, Column, FetchedValue, Text, select
from sqlalchemy.orm import declarative_base

from shardid_router import ShardMap
from shardid_sqlalchemy import engines_for, sharded_sessionmaker, transaction

Base = declarative_base()


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = {"schema": "shard"}  # shard_NNNN, per session shard
    # the ID comes from the table's DEFAULT shardid.next_id(...): never sent, fetched with RETURNING
    id = Column(BigInteger, primary_key=True, server_default=FetchedValue())
    user_id = Column(BigInteger, nullable=False)
    body = Column(Text, nullable=False)

    @property
    def shard(self):  # where a new post goes: its user's shard
        return self.user_id % 16


nodes = json.loads(os.environ["SHARDID_NODES"])
shard_map = ShardMap(os.environ["SHARDID_ROUTER"], nodes)
Session = sharded_sessionmaker(shard_map, engines_for(nodes))


def create_post(user_id, body):
    def insert(session):
        post = Post(user_id=user_id, body=body)
        session.add(post)
        session.flush()  # INSERT ... RETURNING id
        return post.id

    return transaction(shard_map, Session, user_id % 16, insert)


ids = [create_post(user, f"sqlalchemy {user}") for user in (3, 10, 19)]
with Session() as session:
    # by ID: the identity chooser reads the shard inside the ID
    by_id = {str(id): (lambda p: [p.user_id, p.body, shard_map.node_for_id(id)])(session.get(Post, id)) for id in ids}
    # WHERE id IN (...): only the shards of those IDs
    listed = session.execute(select(Post).where(Post.id.in_(ids))).scalars().all()
    # no shard in the query: every placed shard, results concatenated
    everywhere = session.execute(select(Post).where(Post.body.like("sqlalchemy %"))).scalars().all()
print(json.dumps({
    "ids": [str(id) for id in ids],  # strings: JSON numbers lose digits above 2^53
    "shards": [shard_map.shard_of(id) for id in ids],
    "by_id": by_id,
    "in_list": sorted(str(p.id) for p in listed),
    "fan_out": sorted(str(p.id) for p in everywhere),
}))
shard_map.close()
