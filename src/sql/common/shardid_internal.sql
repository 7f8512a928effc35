-- The schema of shardid's internal helpers (every function, procedure and
-- view whose name begins with "_"), out of the way of \df shardid.* and of
-- a user's tab completion, as Citus keeps citus_internal: the schema
-- shardid holds what docs/reference.md documents for users. Its functions
-- are revoked from PUBLIC one by one (sql/internal_functions.sql lists the
-- few that PUBLIC's calls need); USAGE lets the public functions that
-- call them run for every role. Made by the extension, so one that exists
-- already (anyone's) stops CREATE EXTENSION and the update.
CREATE SCHEMA shardid_internal;

GRANT USAGE ON SCHEMA shardid_internal TO PUBLIC;

COMMENT ON SCHEMA shardid_internal IS
    'shardid''s internal helpers (names beginning with "_"), not for direct use; see docs/reference.md, "Internal functions".';
