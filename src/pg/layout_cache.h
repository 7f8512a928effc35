/*
 * layout_cache.h — the database's ID layout, cached per backend
 * (layout_cache.cpp), and the lookups of shardid's own relations.
 */
#pragma once

#include "shardid_pg.h"

/* The layout of this database, read once per backend and on change. */
const shardid::Layout &current_layout(void);

/* Reads the latest committed layout into the cache, and returns it. */
const shardid::Layout &reload_layout(void);

/*
 * The layout as last read, neither locked nor reread: for a caller that
 * knows the cache is current (its layout_generation() has not moved).
 */
const shardid::Layout &last_read_layout(void);

/*
 * How many times this backend has forgotten its cached layout: a marking
 * of the layout (layout_freeze.cpp) holds for the generation it was made in.
 */
uint64 layout_generation(void);

/* Whether this transaction changed layout_config (or wrote the cached row). */
bool layout_changed_in_this_transaction(void);

/* OID of a relation of the extension's schema, or InvalidOid. */
Oid shardid_relation_oid_if_exists(const char *relname);

/* OID of a relation of the extension's schema, erroring if it is missing. */
Oid shardid_relation_oid(const char *relname);
