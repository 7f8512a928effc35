"""A writer through the Python shard map, for test/e2e/apps.sh: inserts into
the given shards in turn until the stop file exists, reads every row back by
its ID, and writes one line per acknowledged insert to the output file:
"ID SHARD RETRIES MILLISECONDS". Any error but the shard map's own retries
ends it with status 1.

    writer.py ROUTER NODES_JSON SHARDS STOP_FILE OUT_FILE
"""
import json
import os
import sys
import time

from shardid_router import ShardMap

router, nodes, shards, stop, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
shards = [int(s) for s in shards.split(",")]
m = ShardMap(router, nodes)
n = 0
with open(out, "w", encoding="ascii") as f:
    while not os.path.exists(stop):
        shard = shards[n % len(shards)]
        n += 1
        schema = m.schema_for_shard(shard)
        before, start = m.retries, time.monotonic()
        id = m.run(shard, lambda conn: conn.execute(
            f"INSERT INTO {schema}.posts (user_id, body) VALUES (%s, %s) RETURNING id",
            (shard, f"python {n}")).fetchone()[0])
        ms = (time.monotonic() - start) * 1000
        f.write(f"{id} {shard} {m.retries - before} {ms:.1f}\n")
        f.flush()
        row = m.run(m.shard_of(id), lambda conn: conn.execute(
            f"SELECT body FROM {m.schema_for_shard(m.shard_of(id))}.posts WHERE id = %s", (id,)).fetchone())
        if row != (f"python {n}",):
            sys.exit(f"lookup by ID {id} on node {m.node_for_id(id)} found {row!r}")
        time.sleep(0.002)
m.close()
print(f"python writer: {n} inserts, {m.retries} retries, {m.reloads} reloads of the map")
