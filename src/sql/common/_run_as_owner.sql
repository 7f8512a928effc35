-- The one fence: runs one statement of shardid's as the role that owns
-- what it touches, in a security-restricted operation, never as the
-- superuser who calls it (src/pg/run_as.cpp): the tenant code that
-- changing a table or writing, emptying or reading a shard's rows runs
-- (triggers, CHECKs, index expressions, defaults, domains, policies) has
-- the owner's rights and cannot SET ROLE back. Moves, apply_ddl() and the
-- copy of a shard's privileges use it. search_path pinned; replica:
-- session_replication_role = replica (superusers only). Executable by
-- PUBLIC (apply_ddl() runs as a table's owner for its members): the
-- caller needs the privileges of the role, as SET ROLE would.
CREATE OR REPLACE FUNCTION shardid_internal._run_as_owner(role regrole, sql text, replica boolean DEFAULT false) RETURNS text
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_run_as_owner';

COMMENT ON FUNCTION shardid_internal._run_as_owner(regrole, text, boolean) IS
    'The one fence for a table owner''s code: runs a statement as a role (the owner of what it touches) in a security-restricted operation, search_path pinned, optionally with session_replication_role = replica (superusers only); returns its first value as text. The caller needs the role''s privileges.';

-- The same fence for a read (run_on_shards()): the statement runs with the
-- transaction read-only (src/pg/run_as.cpp), so that a "read" that
-- writes through a function (setval(), an INSERT in a function) is
-- refused (25006). Executable by PUBLIC, as _run_as_owner().
CREATE OR REPLACE FUNCTION shardid_internal._run_as_owner_read(role regrole, sql text) RETURNS text
    LANGUAGE c VOLATILE STRICT AS 'MODULE_PATHNAME', 'shardid_run_as_owner_read';

COMMENT ON FUNCTION shardid_internal._run_as_owner_read(regrole, text) IS
    'The one fence, for a read: runs a statement as a role in a security-restricted operation, search_path pinned, with the transaction read-only (a write through a function is refused, 25006); returns its first value as text. The caller needs the role''s privileges.';
