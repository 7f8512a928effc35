import json

import psycopg  # Debian: python3-psycopg
from shardid_ids import decode, from_shortcode, to_shortcode


def create_photo(conn, caption):
    # the ID comes from the column DEFAULT (shardid.next_id); RETURNING hands it back
    (id,) = conn.execute(
        "INSERT INTO public.photos (caption) VALUES (%s) RETURNING id", (caption,)
    ).fetchone()
    created_at, shard, seq = decode(id)  # decode(id, epoch_ms=..., ...) for a configured layout
    return {
        "id": str(id),  # a string: JSON numbers lose digits above 2^53
        "created_at": created_at.isoformat(timespec="milliseconds"),
        "shard": shard,
        "url": "/p/" + to_shortcode(id),
    }


def get_photo(conn, code):
    try:
        id = from_shortcode(code)
    except ValueError:
        return None  # not a short code: 404
    row = conn.execute("SELECT caption FROM public.photos WHERE id = %s", (id,)).fetchone()
    return row and {"id": str(id), "caption": row[0]}


with psycopg.connect() as conn:  # PGHOST, PGDATABASE, ... from the environment
    photo = create_photo(conn, "dog")
    print(json.dumps(photo))
    print(json.dumps(get_photo(conn, photo["url"].removeprefix("/p/"))))
