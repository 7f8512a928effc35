"""A reader for test/tap/apps.pl: ShardMap.fan_out() over every placed shard,
in batches of 4 shards, pass after pass until the stop file exists, with a
map that is never reloaded on its interval (reload_interval = 1 hour): only
the errors of a moved shard make it read the placement again (a frozen
shard is waited for up to a minute, retry_deadline). Each pass must
yield every shard's count exactly once, from a READ ONLY transaction; one
line per pass goes to the output file: "PASS RETRIES NODE_OF_SHARD_3".
Any error ends it with status 1.

    fanout_reader.py ROUTER NODES_JSON STOP_FILE OUT_FILE
"""
import json
import os
import sys
import time

from shardid_router import ShardMap

router, nodes, stop, out = sys.argv[1:5]
m = ShardMap(router, json.loads(nodes), reload_interval=3600.0, retry_deadline=60.0)
shards = m.shards()
n = 0
with open(out, "w", encoding="ascii") as f:
    while not os.path.exists(stop):
        n += 1
        seen = [(shard, ro) for shard, (count, ro) in m.fan_out(
            "SELECT count(*), current_setting('transaction_read_only') FROM %s.posts", batch_size=4)]
        if sorted(s for s, _ in seen) != shards or {ro for _, ro in seen} != {"on"}:
            sys.exit(f"fan-out pass {n}: shards {seen}, expected each of {shards} once, read-only")
        f.write(f"{n} {m.retries} {m.node_for_shard(3)}\n")
        f.flush()
        time.sleep(0.01)
m.close()
print(f"fan-out reader: {n} passes over {len(shards)} shards, {m.retries} retries, {m.reloads} reads of the map")
